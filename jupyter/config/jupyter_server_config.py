# Terminals opened from the course's Lab start through jupyter/terminal.sh: the course's .venv is
# first on PATH there (a plain login shell would reset PATH and `python` would not be found).
# Python, not JSON: the script's absolute path is computed from where the course folder is.
from pathlib import Path

_terminal = Path(__file__).resolve().parent.parent / "terminal.sh"
c.ServerApp.terminado_settings = {"shell_command": ["/bin/sh", str(_terminal)]}  # noqa: F821 - `c` is traitlets' config
