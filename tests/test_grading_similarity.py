"""Plagiarism that one dead statement hides, and quadratic padding (issue 21, items 7 and 8)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from similarity_variants import VARIANTS, honest_sources, reference, variant  # noqa: E402

from course_lib.checking.catalog import BY_NAME, EXERCISES  # noqa: E402
from grader.similarity import THRESHOLD, compare, fingerprint, pair_row  # noqa: E402


@pytest.mark.parametrize("kind", VARIANTS)
def test_every_plagiarised_variant_is_flagged(kind):
    missed, total = [], 0
    for exercise in EXERCISES:
        copy = variant(exercise.name, exercise.entry, kind)
        if copy is None:
            continue  # "reordered": one function only, nothing to reorder
        total += 1
        score = compare(fingerprint(reference(exercise.name), exercise.entry), fingerprint(copy, exercise.entry))
        if score < THRESHOLD:
            missed.append((exercise.name, round(score, 3)))
    assert total == (5 if kind == "reordered" else 12)
    assert missed == []  # target was >= 11/12; all are flagged


def test_no_honest_pair_is_flagged():
    scores = {}
    for name, solutions in honest_sources().items():
        entry = BY_NAME[name].entry
        (_, a), (_, b) = solutions
        scores[name] = compare(fingerprint(a, entry), fingerprint(b, entry))
    assert len(scores) == 6
    assert max(scores.values()) < 0.3, scores


def test_pair_row_is_the_csv_row():
    entry = BY_NAME["commit_turn"].entry
    a = fingerprint(reference("commit_turn"), entry)
    b = fingerprint(variant("commit_turn", entry, "combined"), entry)
    assert pair_row("commit_turn", "alice", a, "bob", b) == ["commit_turn", "submissions", "alice", "bob", "1.000"]
    assert fingerprint("def commit_turn(a, b, c):\n    raise NotImplementedError\n", entry) is None  # a stub


def test_padding_costs_linear_time():
    """Colluders padding to the 512 KB limit once cost ~2 h per exercise; the work is now counted in
    tokens fingerprinted, linear in size: 20x the padding is at most ~20x the fingerprints."""
    body = reference("commit_turn")
    small = body + "".join(f"\ndef pad_{i}(x):\n    y = x + {i}\n    return y * {i}\n" for i in range(400))
    large = body + "".join(f"\ndef pad_{i}(x):\n    y = x + {i}\n    return y * {i}\n" for i in range(8000))
    assert 20_000 < len(small) < 30_000 and len(large) < 512 * 1024
    a, b = fingerprint(small), fingerprint(large)
    assert b.size == pytest.approx(a.size * 8000 / 400, rel=0.05)
    assert compare(a, b) >= THRESHOLD  # the padding itself is shared
