"""Scoring a reply against a benchmark question, and finding evidence in a request.

The same normalization serves both: a value counts as present when one of its written forms stands
in the normalized text as whole words. Normalization: lower case, «ё» → «е», every phone number as
«+7XXXXXXXXXX» (whatever spaces, dashes, parentheses, «8» or «+7» it was written with), «№»/«#»
before a number dropped, runs of white space folded into one space.

The rules live in the course's version of the exercise of notebook 10 (`score_answer`); the
benchmark scores answers with the student's function once it passes its public cases (`--your-code`),
while evidence is always found by the course's rules, so that one figure never depends on the other.
"""

from __future__ import annotations

from collections.abc import Sequence

from course_lib.course_versions.score_answer import (
    ABSTENTION_MARKERS,
    _stands_in,
    normalize_answer,
    score_answer,
)

__all__ = ["ABSTENTION_MARKERS", "evidence_present", "normalize_answer", "score_answer"]


def evidence_present(forms: Sequence[str], normalized_text: str) -> bool:
    """Whether one of a value's written forms stands in already normalized text."""
    return any(_stands_in(form, normalized_text) for form in forms)
