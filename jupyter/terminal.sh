#!/bin/sh
# The shell of a terminal opened from the course's JupyterLab (see config/jupyter_server_config.py).
# The course's .venv comes first on PATH, so every `python -m course_lib …` the course prints works
# when pasted here. Jupyter would start a login shell, whose /etc/profile resets PATH; this starts
# the student's shell as an interactive one instead, and bash re-adds the venv after ~/.bashrc.
here="$(cd "$(dirname "$0")" && pwd)"
venv="${VIRTUAL_ENV:-$(dirname "$here")/.venv}"
export VIRTUAL_ENV="$venv"
PATH="$venv/bin:$PATH"
export PATH
shell="${SHELL:-}"
if [ -z "$shell" ] || [ ! -x "$shell" ]; then
  shell="$(command -v bash || command -v sh)"
fi
case "$(basename "$shell")" in
  bash) exec "$shell" --rcfile "$here/terminal.bashrc" -i ;;
  *) exec "$shell" -i ;;
esac
