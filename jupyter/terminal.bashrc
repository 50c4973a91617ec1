# bash in a terminal opened from the course's JupyterLab: the student's own start-up file first,
# then the course's .venv back at the front of PATH (a ~/.bashrc may have rebuilt PATH).
if [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
case ":$PATH:" in
  "$VIRTUAL_ENV/bin:"*) ;;
  *) PATH="$VIRTUAL_ENV/bin:$PATH" ;;
esac
export PATH
