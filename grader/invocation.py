"""How the command was invoked, for `--help` and messages, and paths printed in full.

`course-grader grade --help` says `course-grader grade`; `python -m grader grade --help` says that.
Paths in messages are absolute (an instructor copies them into the next command) and escaped with
`safetext.one_line`: a submission's name can hold terminal escapes or line breaks.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from course_lib.checking.safetext import one_line


def command_name(subcommand: str) -> str:
    program = os.path.basename(sys.argv[0] or "")
    if program.startswith("course-grader"):
        return f"course-grader {subcommand}"
    return f"python -m grader {subcommand}"


def full_path(path: os.PathLike[str] | str) -> str:
    return one_line(os.path.abspath(Path(path)))
