"""Plagiarism that one dead statement hides, and quadratic padding (issue 21, items 7 and 8)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from similarity_variants import REWRITES, VARIANTS, honest_sources, reference, rewrite, variant  # noqa: E402

from course_lib.checking.catalog import BY_NAME, EXERCISES  # noqa: E402
from grader.similarity import THRESHOLD, compare, fingerprint, pair_row  # noqa: E402

# The exercises similarity judges: a reference under similarity.MIN_NODES tokens is too small (every honest
# solution of it looks alike), so nothing is flagged for it. The course's own are all judged; the
# template that `instructor new-exercise` writes is one of the small ones.
JUDGED = tuple(e for e in EXERCISES if fingerprint(reference(e.name), e.entry) is not None)


def test_only_references_too_small_to_fingerprint_are_left_unjudged():
    from grader.scaffold import SOLUTION

    assert fingerprint(SOLUTION.format(name="clean_reply"), "clean_reply") is None  # the template
    for exercise in set(EXERCISES) - set(JUDGED):
        source = reference(exercise.name)
        assert fingerprint(source, exercise.entry) is None and fingerprint(source) is None
    assert len(JUDGED) >= 12  # the course's own exercises, at least


@pytest.mark.parametrize("kind", VARIANTS)
def test_every_plagiarised_variant_is_flagged(kind):
    missed, total = [], 0
    for exercise in JUDGED:
        copy = variant(exercise.name, exercise.entry, kind)
        if copy is None:
            continue  # "reordered": one function only, nothing to reorder
        total += 1
        score = compare(fingerprint(reference(exercise.name), exercise.entry), fingerprint(copy, exercise.entry))
        if score < THRESHOLD:
            missed.append((exercise.name, round(score, 3)))
    # "reordered" needs two functions (or methods) in the reference: not every exercise has them.
    assert total >= 5 if kind == "reordered" else total == len(JUDGED)
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


PADDING = {
    1: """
def _unused_table(rows):
    table = {}
    for row in rows:
        key = str(row).strip().lower()
        if key in table:
            table[key] += 1
        elif key.startswith("#"):
            continue
        else:
            table[key] = 1
    return sorted(table.items(), key=lambda item: (-item[1], item[0]))


def _unused_window(values, size):
    result, total = [], 0
    for index, value in enumerate(values):
        total += value
        if index >= size:
            total -= values[index - size]
        result.append(total / min(index + 1, size))
    return result
""",
    2: """
class _UnusedCache:
    def __init__(self, limit):
        self.limit = limit
        self.items = []

    def put(self, key, value):
        self.items = [pair for pair in self.items if pair[0] != key]
        self.items.append((key, value))
        while len(self.items) > self.limit:
            self.items.pop(0)

    def get(self, key, default=None):
        for stored, value in reversed(self.items):
            if stored == key:
                return value
        return default


def _unused_words(text):
    words = [word for word in text.replace(",", " ").split() if word.isalpha()]
    return {word: len(word) for word in words if len(word) > 3}
""",
}


def _padded(source: str, seed: int) -> str:
    """The same solution with top-level helpers nothing calls, different in each copy."""
    return f"{PADDING[seed]}\n\n{source}\n"


def test_a_copy_is_flagged_the_same_whether_graded_in_one_batch_or_one_after_another(tmp_path):
    """similarity_order: two padded copies were flagged together and missed when graded apart."""
    import csv
    import shutil

    from grader import cli

    root = Path(__file__).resolve().parents[1]
    folders = []
    for seed in (1, 2):
        folder = tmp_path / f"student{seed}"
        folder.mkdir()
        for exercise in JUDGED:
            source = (root / "solutions" / f"{exercise.name}.py").read_text(encoding="utf-8")
            (folder / f"{exercise.name}.py").write_text(_padded(source, seed), encoding="utf-8")
        folders.append(folder)
    quiet = ["--no-progress", "--allow-weak-sandbox"]

    def flagged(out: Path) -> set[str]:
        with open(out / "similarity.csv", encoding="utf-8") as handle:
            rows = [tuple(row.values()) for row in csv.DictReader(handle)]
        assert len(rows) == len(set(rows))  # each pair once
        return {row[0] for row in rows if row[1] == "submissions"}

    together, apart = tmp_path / "together", tmp_path / "apart"
    assert cli.main([*map(str, folders), "--out", str(together), *quiet]) == 0
    assert cli.main([str(folders[0]), "--out", str(apart), *quiet]) == 0
    assert cli.main([str(folders[1]), "--out", str(apart), *quiet]) == 0
    assert flagged(together) == flagged(apart) == {exercise.name for exercise in JUDGED}


@pytest.mark.parametrize("kind", REWRITES)
def test_each_rewrite_that_hides_a_copy_is_undone(kind):
    """similarity_rewrites: each of these hid a copy almost always (8 of 82 caught in all)."""
    caught, total, missed = 0, 0, []
    for exercise in JUDGED:
        copy = rewrite(exercise.name, exercise.entry, kind)
        if copy is None:
            continue  # the file has nothing this rewrite changes
        total += 1
        score = compare(fingerprint(reference(exercise.name), exercise.entry), fingerprint(copy, exercise.entry))
        if score >= THRESHOLD:
            caught += 1
        else:
            missed.append((exercise.name, round(score, 3)))
    assert total >= 4
    assert caught / total >= 0.75, missed


def test_the_rewrites_together_are_caught_nine_times_in_ten_and_no_honest_pair_is_flagged():
    caught = total = 0
    for kind in REWRITES:
        for exercise in JUDGED:
            copy = rewrite(exercise.name, exercise.entry, kind)
            if copy is not None:
                total += 1
                score = compare(fingerprint(reference(exercise.name), exercise.entry), fingerprint(copy, exercise.entry))
                caught += score >= THRESHOLD
    assert total >= 50 and caught / total >= 0.9, (caught, total)
    for name, ((_, a), (_, b)) in honest_sources().items():
        entry = BY_NAME[name].entry
        assert compare(fingerprint(a, entry), fingerprint(b, entry)) < 0.5, name
