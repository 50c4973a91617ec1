"""The course's own version of every exercise: what the notebooks run until the student's passes.

One module per exercise, named like `exercises/<name>.py` and defining the same entry (and the same
custom exceptions), using only the standard library, so the grader's sandbox can run each module
exactly like a student's file. `tests/test_course_versions.py` grades every module on the public
*and* hidden cases: the course's version scores full points, so a notebook behaves the same whichever
implementation runs. `course_lib.your_code` picks between the student's file and these.
"""
