"""grader: the instructor's tooling for the course — grading hand-ins with hidden cases, regrades,
rosters, LMS exports, the Gradescope zip, similarity, the student bundle and new exercises.

It is not shipped to students (`python -m grader release` verifies that). The case format, the
sandboxed runner and the judge live in `course_lib.checking`, which the student's `check()` runs
too, so "passes locally" means what it means at grading. Standard library only, like the checker:
the Gradescope zip runs it on a bare `python3`.
"""
