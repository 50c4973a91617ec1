"""Exercise grading: the case format, the sandboxed runner, the reports and the command lines.

`python -m course_lib grade` (cli.py) and `python -m course_lib release` (release.py) are the
instructor's entry points; `course_lib.exercises.check()` is the student's, and runs the public
cases through the same runner.
"""
