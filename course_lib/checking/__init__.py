"""The checker both sides share: the exercise registry, the case format, the sandboxed runner and
the judge — what the student's `check()` runs on public cases and the grader on hidden ones.

Standard library only (the Gradescope zip runs it on a bare `python3`); it imports nothing else
of the course, so "passes locally" means exactly what it means at grading.
"""
