"""Benchmark (not a test): plagiarism detection, false positives and cost, today's method vs the old one.

    .venv/bin/python benchmarks/bench_similarity.py

Variants of the 12 reference solutions (tests/similarity_variants.py): copy, renamed names,
reordered functions, one unused assignment, an unused helper plus an `if False:` block, all combined;
one rewrite each (if/else swapped, strings split, `x = x`, for → while, an extracted helper,
mirrored comparisons, comprehension → loop); honest pairs: each reference against an independently
written solution (tests/similarity_honest/).
Then the time of one comparison of two colluders' files padded to 25 KB and to 512 KB, and the
similarity report of a class: 300 submissions (each exercise a random variant or rewrite of the
reference, so most pairs are flagged: the worst case) graded in one batch, then one late hand-in
against the 299 stored, cold and warm (`grader.state.update_similarity`, prints kept in OUT/.state).
"""

from __future__ import annotations

import ast
import random
import shutil
import sys
import tempfile
import time
from difflib import SequenceMatcher
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from grader import similarity, state  # noqa: E402
from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout  # noqa: E402
from similarity_variants import REWRITES, VARIANTS, honest_sources, reference, rewrite, variant  # noqa: E402

OLD_LIMIT_SECONDS = 120.0


# --- the method before issue 21: in-order syntax-tree walk, difflib ratio -------------------------


class _OldNormalize(ast.NodeTransformer):
    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, name):
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node):
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.name = self._name(node.name)
        node.returns = None
        _old_drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node):
        node.name = self._name(node.name)
        _old_drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            node.value = "S"
        return node


def _old_drop_docstring(node):
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        node.body = body[1:] or [ast.Pass()]


def _old_tokens(source):
    tree = _OldNormalize().visit(ast.parse(source))
    _old_drop_docstring(tree)
    out = []
    for node in ast.walk(tree):
        label = type(node).__name__
        if isinstance(node, ast.Name):
            label += ":" + node.id
        elif isinstance(node, ast.Attribute):
            label += ":" + node.attr
        elif isinstance(node, ast.Constant):
            label += ":" + repr(node.value)[:20]
        out.append(label)
    return tuple(out)


def _old_score(a_source, b_source):
    a, b = _old_tokens(a_source), _old_tokens(b_source)
    if a == b:
        return 1.0
    if not a or not b or min(len(a), len(b)) / max(len(a), len(b)) < 0.85:
        return 0.0
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < 0.9 or matcher.quick_ratio() < 0.9:
        return 0.0
    return matcher.ratio()


def _new_score(a_source, b_source, entry):
    return similarity.compare_sources(a_source, b_source, entry)


def padded(size: int, seed: int) -> str:
    body = reference("commit_turn")
    parts, index = [body], 0
    while sum(map(len, parts)) < size:
        parts.append(f"\ndef pad_{seed}_{index}(x):\n    y = x + {index}\n    return y * {index % 7}\n")
        index += 1
    return "".join(parts)[: size] .rsplit("\ndef ", 1)[0] + "\n"


def main() -> int:
    threshold = similarity.THRESHOLD
    print(f"threshold {threshold}; flagged / plagiarised copies of the reference solutions")
    print(f"{'variant':28} {'old method':>12} {'new method':>12}")
    for kind in VARIANTS:
        old = new = total = 0
        for exercise in EXERCISES:
            copy = variant(exercise.name, exercise.entry, kind)
            if copy is None:
                continue
            total += 1
            old += _old_score(reference(exercise.name), copy) >= threshold
            new += _new_score(reference(exercise.name), copy, exercise.entry) >= threshold
        print(f"{kind:28} {f'{old}/{total}':>12} {f'{new}/{total}':>12}")
    print()
    print("one rewrite each (where the file has something it changes)")
    all_old = all_new = all_total = 0
    for kind in REWRITES:
        old = new = total = 0
        for exercise in EXERCISES:
            copy = rewrite(exercise.name, exercise.entry, kind)
            if copy is None:
                continue
            total += 1
            old += _old_score(reference(exercise.name), copy) >= threshold
            new += _new_score(reference(exercise.name), copy, exercise.entry) >= threshold
        all_old, all_new, all_total = all_old + old, all_new + new, all_total + total
        print(f"{kind:28} {f'{old}/{total}':>12} {f'{new}/{total}':>12}")
    print(f"{'all rewrites':28} {f'{all_old}/{all_total}':>12} {f'{all_new}/{all_total}':>12}")
    old = new = total = 0
    for name, ((_, a), (_, b)) in honest_sources().items():
        total += 1
        old += _old_score(a, b) >= threshold
        new += _new_score(a, b, BY_NAME[name].entry) >= threshold
    print(f"{'honest pairs flagged (FP)':28} {f'{old}/{total}':>12} {f'{new}/{total}':>12}")
    print()
    print(f"{'one padded pair':28} {'old method':>12} {'new method':>12}")
    for size in (25 * 1024, 512 * 1024):
        a, b = padded(size, 1), padded(size, 1).replace("y * ", "y + ")
        started = time.perf_counter()
        new_value = _new_score(a, b, "commit_turn")
        new_seconds = time.perf_counter() - started
        if size <= 25 * 1024:
            started = time.perf_counter()
            _old_score(a, b)
            old_text = f"{time.perf_counter() - started:.2f} s"
        else:
            old_text = "not run"  # quadratic: ~2 h extrapolated in issue 21
        print(f"{f'{size // 1024} KB files':28} {old_text:>12} {f'{new_seconds:.2f} s':>12}   (new score {new_value:.3f})")
    print()
    class_report(300)
    return 0


def class_report(count: int) -> None:
    """The class's similarity.csv: one batch of `count - 1`, then one late hand-in (cold, warm)."""
    chance = random.Random(1)
    pool = {
        exercise.name: [source for source in (
            [variant(exercise.name, exercise.entry, kind) for kind in VARIANTS]
            + [rewrite(exercise.name, exercise.entry, kind) for kind in REWRITES]) if source]
        for exercise in EXERCISES
    }  # fmt: skip
    submissions = {
        f"s{number:03d}": {name: chance.choice(sources) + f"\n# {number}\n" for name, sources in pool.items()}
        for number in range(count)
    }
    *batch_names, late_name = submissions
    out = Path(tempfile.mkdtemp(prefix="bench-similarity-"))
    try:
        for name in batch_names:
            state.save(out, name, [], submissions[name])
        layout = CourseLayout(ROOT)
        started = time.perf_counter()
        _, rows = state.update_similarity(out, layout, EXERCISES, {n: submissions[n] for n in batch_names}, 0.9)
        print(f"{f'{count - 1} submissions, one batch':28} {time.perf_counter() - started:>10.1f} s   ({rows} rows)")
        late = {late_name: submissions[late_name]}
        state.save(out, late_name, [], submissions[late_name])
        for label in ("one late hand-in, cold", "the same again, warm"):
            started = time.perf_counter()
            state.update_similarity(out, layout, EXERCISES, late, 0.9)
            print(f"{label:28} {time.perf_counter() - started:>10.1f} s   (against {count - 1} stored)")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
