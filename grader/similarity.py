"""similarity.csv: submissions whose code for an exercise is nearly the same, per exercise.

The method is MOSS's: winnowed fingerprints of normalized token k-grams, compared as sets, per file
and per function. Each file is parsed and cleaned first: docstrings, annotations and `pass` go, and
so does dead code that only exists to shift a copy away from its source (`if False:`/`while 0:`
blocks, assignments to a name nothing reads, top-level helpers the exercise's entry never reaches,
`x = x`, `x += 0`, a string on a line of its own). What can be written two ways is written one way
(`_Canonical`, as JPlag-style tools do): mirrored comparisons, both polarities of an if/else, an
else after a return, strings split with `+`, a list built by a comprehension or by a loop, a `for`
written as a counted `while`; and a helper called from one place only is read as its body at the
call (a piece of the solution split off into a function of its own).
The syntax tree is then written out in order as tokens where every local name is `V`, every string
is `S` and numbers keep their value (attribute names, builtins and keywords stay: they are the
algorithm). Every k consecutive tokens hash to one value; of each window of W hashes the smallest
is kept (winnowing), so any shared run of at least W + K - 1 tokens is sure to share a fingerprint,
whatever was inserted, reordered or renamed around it.

Two files score the share of the smaller one's fingerprints found in the other (containment: extra
junk in the copy does not dilute it), and the same per function (each function of the smaller side
matched with its best partner, weighted by size, so reordered functions match too); the pair's score
is the larger of the two. Cost: linear in the files' size (one pass to tokens, one to fingerprints,
set intersections); fingerprints shared by more than `COMMON_LIMIT` functions of a file are ignored
for the per-function match, which bounds it however a file is padded.

A pair is reported at the threshold (default 0.9) when both files are more than a stub (at least
`MIN_NODES` tokens and not the stub itself). Submissions are also compared with every function shown
in the notebooks' code cells and in course_lib (copying that is a hint, not proof). The report is a
hint for a human: short exercises legitimately converge.

Pure API (no I/O) for incremental use: `fingerprint(source, entry=None)`, `compare(a, b)`,
`compare_sources(a, b)`, `pair_row(exercise, a_name, a, b_name, b, threshold)`.
"""

from __future__ import annotations

import ast
import builtins
import copy
import csv
import functools
import hashlib
import json
import zlib
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from course_lib.checking.catalog import CourseLayout, Exercise
from course_lib.checking.safetext import csv_cell

THRESHOLD = 0.9
VERSION = 3  # of the normalization: fingerprints stored by an older one are computed again
MIN_NODES = 40  # tokens: below this a file or function is too small to judge
K = 12  # tokens per k-gram
WINDOW = 6  # winnowing window: any shared run of WINDOW + K - 1 tokens is found
COMMON_LIMIT = 16  # a fingerprint in more functions than this is boilerplate for the per-function match
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Fingerprint:
    """One file, ready to compare: its fingerprints, and each function's (with its token count)."""

    hashes: frozenset[int]
    functions: tuple[tuple[frozenset[int], int], ...]
    size: int  # normalized tokens


# --- cleaning: what only exists to shift a copy ---------------------------------------------------


def _is_false(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and not test.value and not isinstance(test.value, str) or (
        isinstance(test, ast.Constant) and test.value in ("", b"")
    )


def _loaded_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


class _Clean(ast.NodeTransformer):
    """Drop docstrings, annotations, `pass`, constant-false blocks and stores nothing reads."""

    def __init__(self, loaded: set[str]) -> None:
        self.loaded = loaded
        self.removed_store = False

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        kept = []
        for index, statement in enumerate(body):
            if index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring (or a bare constant: no effect either way)
            if isinstance(statement, ast.Pass):
                continue
            if isinstance(statement, (ast.If, ast.While)) and _is_false(statement.test):
                kept.extend(statement.orelse if isinstance(statement, ast.If) else [])
                continue
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and self._dead(statement):
                self.removed_store = True
                continue
            kept.append(statement)
        return kept

    def _dead(self, statement: ast.stmt) -> bool:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if not all(isinstance(target, ast.Name) for target in targets):
            return False
        value = statement.value
        pure = value is None or isinstance(value, (ast.Constant, ast.Name))  # no call hides in it
        return pure and not any(target.id in self.loaded for target in targets)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self._body(value))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            node.decorator_list = [d for d in node.decorator_list if not isinstance(d, ast.Name) or d.id not in ("staticmethod", "classmethod")]
        if isinstance(node, ast.arg):
            node.annotation = None
        if isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)
        return node


# --- canonical forms: what is written two ways is tokenized one way ------------------------------

_NEGATED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
            ast.NotIn: ast.In}  # fmt: skip
_TERMINAL = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _positive(test: ast.expr) -> tuple[ast.expr, bool]:
    """(the test without a leading negation, whether one was removed)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner, negated = _positive(test.operand)
        return inner, not negated
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in (ast.NotEq, ast.IsNot, ast.NotIn):
        return ast.Compare(test.left, [_NEGATED[type(test.ops[0])]()], test.comparators), True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.LtE):
        return ast.Compare(test.comparators[0], [ast.Lt()], [test.left]), True  # a <= b is not (b < a)
    return test, False


def _negated(test: ast.expr) -> ast.expr:
    """`not test`, written as an early return would write it (`a not in b`, `a != b`, `not c`)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED:
        return ast.Compare(test.left, [_NEGATED[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)


class _Canonical(ast.NodeTransformer):
    """One form for: mirrored comparisons (`b > a` is `a < b`), the two polarities of an if/else
    and of `x if c else y`, an else after a branch that returns, constant strings split with `+`,
    `x = x` and `x += 0`, a list built by a loop or by a comprehension, and a `for` loop written
    with a counter and `while` (the usual ways to hide a copy without changing what it does)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1:
            op = type(node.ops[0])
            if op in (ast.Gt, ast.GtE):
                return ast.Compare(node.comparators[0], [ast.Lt() if op is ast.Gt else ast.LtE()], [node.left])
            # Operands ordered by kind only (local names are all V anyway): constant time, so that
            # nested comparisons cannot make this quadratic.
            if op in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot) and _kind(node.comparators[0]) < _kind(node.left):
                return ast.Compare(node.comparators[0], node.ops, [node.left])
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Add) and all(
            isinstance(side, ast.Constant) and isinstance(side.value, str) for side in (node.left, node.right)
        ):
            return ast.Constant(node.left.value + node.right.value)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        test, negated = _positive(node.test)
        return ast.IfExp(test, node.orelse, node.body) if negated else ast.IfExp(test, node.body, node.orelse)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self._statements(value))
        return node

    def _statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in body:
            if _no_op(statement):
                continue
            if isinstance(statement, ast.If) and statement.orelse:
                test, negated = _positive(statement.test)
                if negated:
                    statement = ast.If(test, statement.orelse, statement.body)
                else:
                    statement.test = test
                if not isinstance(statement.body[-1], _TERMINAL) and isinstance(statement.orelse[-1], _TERMINAL):
                    # `if c: <rest> else: return X` is the early return `if not c: return X` + rest
                    statement = ast.If(_negated(statement.test), statement.orelse, statement.body)
                if isinstance(statement.body[-1], _TERMINAL):  # no else after a return
                    out.append(ast.If(statement.test, statement.body, []))
                    out.extend(self._statements(statement.orelse))
                    continue
            comprehension = getattr(statement, "value", None)
            if isinstance(statement, (ast.Return, ast.Assign)) and _simple_list_comprehension(comprehension):
                out.extend(_as_loop(statement, comprehension))
                continue
            if isinstance(statement, ast.While):
                loop = _counted_loop(out, statement)
                if loop is not None:
                    out.append(loop)
                    continue
            out.append(statement)
        return out


def _kind(node: ast.expr) -> str:
    return type(node).__name__


def _no_op(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True  # a string or number on its own line (a docstring moved down, a marker)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
        return isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id == value.id
    if isinstance(statement, ast.AugAssign) and isinstance(statement.value, ast.Constant):
        neutral = {ast.Add: 0, ast.Sub: 0, ast.Mult: 1}.get(type(statement.op))
        return neutral is not None and statement.value.value == neutral and type(statement.value.value) is int
    return False


def _simple_list_comprehension(node: ast.AST | None) -> bool:
    return isinstance(node, ast.ListComp) and len(node.generators) == 1 and not node.generators[0].is_async


def _as_loop(statement: ast.stmt, comprehension: ast.ListComp) -> list[ast.stmt]:
    """`return [e for t in it if c]` / `x = [...]` as the loop that builds the same list."""
    if isinstance(statement, ast.Assign):
        if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
            return [statement]
        name = statement.targets[0].id
    else:
        name = "_collected"
    generator = comprehension.generators[0]
    inner: ast.stmt = ast.Expr(
        ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "append", ast.Load()), [comprehension.elt], [])
    )
    for condition in reversed(generator.ifs):
        inner = ast.If(condition, [inner], [])
    loop = [ast.Assign([ast.Name(name, ast.Store())], ast.List([], ast.Load())),
            ast.For(generator.target, generator.iter, [inner], [])]  # fmt: skip
    return loop + ([ast.Return(ast.Name(name, ast.Load()))] if isinstance(statement, ast.Return) else [])


def _counted_loop(before: list[ast.stmt], loop: ast.While) -> ast.For | None:
    """`i = 0; while i < len(xs): x = xs[i]; …; i += 1` (or `while i < n`) as the `for` it is.
    Takes the counter's start (and a `xs = list(…)` copy made for it) off `before`."""
    test, body = loop.test, loop.body
    if loop.orelse or not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt)):
        return None
    counter = test.left
    last = body[-1] if body else None
    if not (isinstance(counter, ast.Name) and isinstance(last, ast.AugAssign) and isinstance(last.op, ast.Add)
            and isinstance(last.target, ast.Name) and last.target.id == counter.id
            and isinstance(last.value, ast.Constant) and last.value.value == 1):  # fmt: skip
        return None
    start = before[-1] if before else None
    if isinstance(start, ast.Assign) and len(start.targets) == 1 and isinstance(start.targets[0], ast.Name) \
            and start.targets[0].id == counter.id and isinstance(start.value, ast.Constant) and start.value.value == 0:
        before.pop()
    body, bound = body[:-1], test.comparators[0]
    first = body[0] if body else None
    is_len = isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name) and bound.func.id == "len" and len(bound.args) == 1
    if is_len and isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.value, ast.Subscript) \
            and ast.dump(first.value.value) == ast.dump(bound.args[0]) \
            and isinstance(first.value.slice, ast.Name) and first.value.slice.id == counter.id:
        sequence = bound.args[0]
        copy_made = before[-1] if before else None
        if isinstance(sequence, ast.Name) and isinstance(copy_made, ast.Assign) and len(copy_made.targets) == 1 \
                and isinstance(copy_made.targets[0], ast.Name) and copy_made.targets[0].id == sequence.id \
                and isinstance(copy_made.value, ast.Call) and isinstance(copy_made.value.func, ast.Name) \
                and copy_made.value.func.id == "list" and len(copy_made.value.args) == 1:
            before.pop()
            sequence = copy_made.value.args[0]
        return ast.For(first.targets[0], sequence, body[1:] or [ast.Pass()], [])
    return ast.For(counter, ast.Call(ast.Name("range", ast.Load()), [bound], []), body or [ast.Pass()], [])


def _reachable(tree: ast.Module, entry: str) -> ast.Module:
    """Only what the exercise's entry can reach among the top-level functions and classes."""
    defined = {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    if entry not in defined:
        return tree
    seen, frontier = {entry}, [entry]
    outside = [node for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for name in _loaded_names(ast.Module(outside, [])) & set(defined):
        if name not in seen:
            seen.add(name)
            frontier.append(name)
    while frontier:
        for name in _loaded_names(defined[frontier.pop()]) & set(defined):
            if name not in seen:
                seen.add(name)
                frontier.append(name)
    tree.body = [node for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name in seen]
    return tree


def _clean(tree: ast.Module, entry: str | None) -> ast.Module:
    tree = _Canonical().visit(tree)
    for _ in range(3):  # removing one dead store can leave another
        cleaner = _Clean(_loaded_names(tree))
        tree = cleaner.visit(tree)
        if not cleaner.removed_store:
            break
    return _reachable(tree, entry) if entry else tree


# --- tokens and fingerprints ----------------------------------------------------------------------


def _label(node: ast.AST) -> str:
    label = type(node).__name__
    if isinstance(node, ast.Name):
        return label + (":" + node.id if node.id in _BUILTINS else ":V")
    if isinstance(node, ast.Attribute):
        return label + ":" + node.attr
    if isinstance(node, ast.Constant):
        return label + (":S" if isinstance(node.value, (str, bytes)) else ":" + repr(node.value)[:20])
    if isinstance(node, (ast.BinOp, ast.BoolOp, ast.UnaryOp)):
        return label + ":" + type(node.op).__name__
    if isinstance(node, ast.Compare):
        return label + ":" + ",".join(type(op).__name__ for op in node.ops)
    return label


def _preorder(node: ast.AST, out: list[str], inline: dict[str, ast.FunctionDef] | None = None) -> None:
    """Tokens in source order (depth first), without recursion limits on deep padding. A call to
    a function in `inline` is written as that function's body (a helper split off to hide a copy
    reads like the code it came from), never twice along one path."""
    inline = inline or {}
    stack: list[tuple[ast.AST, frozenset[str]]] = [(node, frozenset())]
    while stack:
        current, expanding = stack.pop()
        if isinstance(current, (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)):
            continue
        # `return helper(…)`, `helper(…)` and `x = helper(…)` become the helper's statements.
        call = current.value if isinstance(current, (ast.Return, ast.Expr, ast.Assign)) else current
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            name = call.func.id
            if name in inline and name not in expanding:
                inner = expanding | {name}
                stack.extend((statement, inner) for statement in reversed(inline[name].body))
                continue
        out.append(_label(current))
        stack.extend((child, expanding) for child in reversed(list(ast.iter_child_nodes(current))))


def _single_use_helpers(tree: ast.Module, entry: str | None) -> dict[str, ast.FunctionDef]:
    """Top-level functions (not the entry) called from exactly one place."""
    calls: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls[node.func.id] = calls.get(node.func.id, 0) + 1
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name != entry and calls.get(node.name) == 1
    }


def tokens(tree: ast.AST) -> tuple[str, ...]:
    """The normalized tree (cleaned, names and strings abstracted) as a token sequence."""
    if isinstance(tree, ast.Module):
        tree = _clean(tree, None)
    out: list[str] = []
    _preorder(tree, out)
    return tuple(out[1:] if isinstance(tree, ast.Module) else out)


def _winnow(labels: list[str]) -> frozenset[int]:
    codes = [zlib.crc32(label.encode("utf-8", "surrogatepass")) for label in labels]
    if len(codes) < K:
        return frozenset()
    grams = [zlib.crc32(b"".join(code.to_bytes(4, "little") for code in codes[i : i + K])) for i in range(len(codes) - K + 1)]
    if len(grams) <= WINDOW:
        return frozenset({min(grams)})
    kept = set()
    for start in range(len(grams) - WINDOW + 1):
        kept.add(min(grams[start : start + WINDOW]))
    return frozenset(kept)


# Fingerprinting is a pure function of the text and costs milliseconds per file: a grading run asks
# for each file's several times (the course-version flag while grading, the pairs, the course
# code), so each is computed once per process. The key is the text itself, never a name.
@functools.lru_cache(maxsize=8192)
def fingerprint(source: str | None, entry: str | None = None) -> Fingerprint | None:
    """One file's fingerprints; None when empty, unparsable or too small to judge."""
    if not source:
        return None
    try:
        return _fingerprint_tree(ast.parse(source), entry)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _fingerprint_tree(tree: ast.Module, entry: str | None) -> Fingerprint | None:
    tree = _clean(tree, entry)
    inline = _single_use_helpers(tree, entry)
    labels: list[str] = []
    _preorder(tree, labels, inline)
    labels = labels[1:]
    if len(labels) < MIN_NODES:
        return None
    functions = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own: list[str] = []
            _preorder(node, own, inline)
            if len(own) >= MIN_NODES:
                functions.append((_winnow(own), len(own)))
    return Fingerprint(_winnow(labels), tuple(functions), len(labels))


def _containment(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return len(small & large) / len(small)


def _per_function(a: Fingerprint, b: Fingerprint) -> float:
    """Each function of the side with fewer tokens in functions, matched with its best partner."""
    if not a.functions or not b.functions:
        return 0.0
    small, large = (a, b) if sum(n for _, n in a.functions) <= sum(n for _, n in b.functions) else (b, a)
    index: dict[int, list[int]] = {}
    for number, (hashes, _) in enumerate(large.functions):
        for value in hashes:
            index.setdefault(value, []).append(number)
    matched = total = 0.0
    for hashes, size in small.functions:
        counts: dict[int, int] = {}
        for value in hashes:
            owners = index.get(value, ())
            if len(owners) <= COMMON_LIMIT:
                for owner in owners:
                    counts[owner] = counts.get(owner, 0) + 1
        best = max((count / len(hashes) for count in counts.values()), default=0.0) if hashes else 0.0
        matched += best * size
        total += size
    return matched / total if total else 0.0


def compare(a: Fingerprint, b: Fingerprint) -> float:
    """Similarity 0…1: the larger of whole-file and per-function containment."""
    if a.hashes == b.hashes:
        return 1.0
    whole = _containment(a.hashes, b.hashes)
    return whole if whole == 1.0 else max(whole, _per_function(a, b))


def compare_sources(a_source: str | None, b_source: str | None, entry: str | None = None) -> float:
    a, b = fingerprint(a_source, entry), fingerprint(b_source, entry)
    return 0.0 if a is None or b is None else compare(a, b)


def pair_row(
    exercise_name: str, a_name: str, a: Fingerprint, b_name: str, b: Fingerprint, threshold: float = THRESHOLD
) -> list[str] | None:
    """The similarity.csv row for a flagged pair of submissions, else None."""
    score = compare(a, b)
    return [exercise_name, "submissions", a_name, b_name, f"{score:.3f}"] if score >= threshold else None


# --- the batch report -----------------------------------------------------------------------------


# Within one process (a batch, then a regrade; a test session) the course code is fingerprinted
# once: by digest, as the on-disk cache, so an edited cell is never served stale.
_COURSE_MEMO: dict[str, list[tuple[str, Fingerprint]]] = {}
_COURSE_MEMO_LIMIT = 20_000


def _functions_of(origin: str, source: str) -> list[tuple[str, Fingerprint]]:
    """Each function of one cell or file, fingerprinted on its own."""
    functions = []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = ast.Module([], [])
    defined = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, defined)), key=lambda n: (n.lineno, n.col_offset)):
        # Fingerprinting rewrites a tree in place. Functions side by side are separate subtrees;
        # only one that holds another is copied, before (outer first) the inner one is rewritten.
        nested = any(isinstance(inner, defined) for inner in ast.walk(node) if inner is not node)
        own = copy.deepcopy(node) if nested else node
        try:
            printed = _fingerprint_tree(ast.Module([own], []), None)
        except (ValueError, RecursionError):
            printed = None
        if printed is not None:
            functions.append((f"{origin}:{node.name}", printed))
    return functions


def course_functions(
    layout: CourseLayout, known: dict | None = None, learned: dict | None = None
) -> list[tuple[str, Fingerprint]]:
    """Every function shown to students (notebooks' code cells and course_lib), fingerprinted.

    `known` (SHA-256 of a cell or file → its functions' records) is read, `learned` gets every
    cell and file of this run: a grader run fingerprints only the course code that changed."""
    found: list[tuple[str, Fingerprint]] = []
    cache = learned

    def add(origin: str, source: str) -> None:
        digest = hashlib.sha256(f"{VERSION}\0{origin}\0{source}".encode("utf-8", "surrogatepass")).hexdigest()
        if known is not None and digest in known:
            if learned is not None:
                learned[digest] = known[digest]
            found.extend((name, from_record(record)) for name, record in known[digest])
            return
        functions = _COURSE_MEMO.get(digest)
        if functions is None:
            functions = _functions_of(origin, source)
            if len(_COURSE_MEMO) >= _COURSE_MEMO_LIMIT:
                _COURSE_MEMO.clear()
            _COURSE_MEMO[digest] = functions
        found.extend(functions)
        if cache is not None:
            cache[digest] = [[name, to_record(printed)] for name, printed in functions]

    notebooks = layout.root / "notebooks"  # the main notebooks and the bonus ones in notebooks/bonus/
    for path in sorted(notebooks.glob("*.ipynb")) + sorted(notebooks.glob("bonus/*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for number, cell in enumerate(cells):
            if cell.get("cell_type") == "code":
                text = "".join(cell.get("source", []))
                add(f"notebooks/{path.relative_to(notebooks).as_posix()}#{number}", "\n".join(
                    line for line in text.splitlines() if not line.lstrip().startswith(("%", "!"))
                ))  # fmt: skip
    for path in sorted((layout.root / "course_lib").rglob("*.py")):
        if "checking" in path.parts:  # the checker itself, not course code a student could copy
            continue
        add(str(path.relative_to(layout.root)), path.read_text(encoding="utf-8", errors="replace"))
    return found


@functools.lru_cache(maxsize=8192)
def _entry_fingerprint(source: str | None, entry: str) -> Fingerprint | None:
    """The exercise's own function (or class), compared with course code."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == entry:
            try:
                return _fingerprint_tree(ast.Module([node], []), None)
            except (ValueError, RecursionError):
                return None
    return None


def to_record(printed: Fingerprint | None) -> dict | None:
    """A fingerprint as JSON (what the grader keeps per graded file, see state.cached_prints)."""
    if printed is None:
        return None
    return {"hashes": sorted(printed.hashes), "functions": [[sorted(h), n] for h, n in printed.functions],
            "size": printed.size}  # fmt: skip


def from_record(record: dict) -> Fingerprint:
    return Fingerprint(
        frozenset(int(value) for value in record["hashes"]),
        tuple((frozenset(int(value) for value in hashes), int(size)) for hashes, size in record["functions"]),
        int(record["size"]),
    )


def hand_in_prints(
    layout: CourseLayout, exercise: Exercise, sources: dict[str, str | None]
) -> dict[str, Fingerprint]:
    """The one way hand-ins are fingerprinted, in a batch and in a regrade alike: from the
    exercise's entry and what it reaches (unused helpers left out); empty files, unparsable ones
    and the untouched stub are not judged."""
    stub = layout.exercises_dir / f"{exercise.name}.py"
    stub_print = fingerprint(stub.read_text(encoding="utf-8"), exercise.entry) if stub.is_file() else None
    prints = {}
    for submission, source in sources.items():
        printed = fingerprint(source, exercise.entry)
        if printed is not None and (stub_print is None or printed.hashes != stub_print.hashes):
            prints[submission] = printed
    return prints


def pair_rows(
    exercise: Exercise, fresh: dict[str, Fingerprint], others: dict[str, Fingerprint] | None = None,
    threshold: float = THRESHOLD,
) -> list[list[str]]:  # fmt: skip
    """Rows for flagged pairs: within `fresh` (no `others`), or each of `fresh` with each of `others`."""
    if others is None:
        pairs = list(combinations(fresh.items(), 2))
    else:
        pairs = [(a, b) for a in fresh.items() for b in others.items()]
    rows = []
    for (a, pa), (b, pb) in pairs:
        row = pair_row(exercise.name, a, pa, b, pb, threshold)
        if row:
            rows.append(row)
    return rows


def similarity_rows(
    layout: CourseLayout,
    exercises: list[Exercise],
    sources: dict[str, dict[str, str | None]],  # submission -> exercise -> source
    threshold: float = THRESHOLD,
    prints=None,  # (exercise, {submission: source}) -> {submission: Fingerprint}, hand_in_prints by default
    course_cache: tuple[dict, dict] | None = None,  # (known, learned), see course_functions
) -> list[list[str]]:
    """Pairs among these submissions and their matches with course code."""
    shown = course_functions(layout, *(course_cache or ()))
    index = _course_index(shown)
    rows = []
    for exercise in exercises:
        files = {submission: by_exercise.get(exercise.name) for submission, by_exercise in sources.items()}
        prepared = prints(exercise, files) if prints else hand_in_prints(layout, exercise, files)
        rows += pair_rows(exercise, prepared, None, threshold)
        for submission, printed in prepared.items():
            own = _entry_fingerprint(files[submission], exercise.entry) or printed
            for origin, score in _course_matches(own, shown, index, threshold):
                rows.append([exercise.name, "course_code", submission, origin, f"{score:.3f}"])
    return rows


def _course_index(shown: list[tuple[str, Fingerprint]]) -> dict[int, list[int]]:
    index: dict[int, list[int]] = {}
    for number, (_, printed) in enumerate(shown):
        for value in printed.hashes:
            index.setdefault(value, []).append(number)
    return index


def _course_matches(
    own: Fingerprint, shown: list[tuple[str, Fingerprint]], index: dict[int, list[int]], threshold: float
) -> list[tuple[str, float]]:
    """Course functions sharing at least `threshold` of the smaller side's fingerprints, found
    through an inverted index (one pass over the submission's fingerprints, not one per function)."""
    counts: dict[int, int] = {}
    for value in own.hashes:
        for number in index.get(value, ()):
            counts[number] = counts.get(number, 0) + 1
    found = []
    for number, count in counts.items():
        origin, course = shown[number]
        score = count / max(1, min(len(own.hashes), len(course.hashes)))
        if score >= threshold:
            found.append((origin, score))
    return found


def course_version_prints(layout: CourseLayout, exercises: list[Exercise]) -> dict[str, Fingerprint]:
    """The course's own working version of each exercise (course_lib/course_versions, shipped to
    students so the notebooks run before an exercise is solved), fingerprinted by exercise name."""
    folder = layout.root / "course_lib" / "course_versions"
    prints = {}
    for exercise in exercises:
        path = folder / f"{exercise.name}.py"
        try:
            printed = fingerprint(path.read_text(encoding="utf-8"), exercise.entry) if path.is_file() else None
        except OSError:
            printed = None
        if printed is not None:
            prints[exercise.name] = printed
    return prints


def copies_course_version(
    source: str | None, exercise: Exercise, prints: dict[str, Fingerprint], threshold: float = THRESHOLD
) -> bool:
    """True when the hand-in is (nearly) the course's own version of the exercise: it passes every
    test, so grades.csv flags it for a human (`course_version`) instead of leaving it to similarity.csv.

    Called during grading (while the other workers' children run): the fingerprints it builds, the
    file's and its entry's, are the ones similarity.csv uses after the batch, from the cache."""
    course = prints.get(exercise.name)
    printed = fingerprint(source, exercise.entry) if source else None
    if printed is not None:
        _entry_fingerprint(source, exercise.entry)
    return printed is not None and course is not None and compare(printed, course) >= threshold


def write_similarity(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        writer.writerow(["exercise", "kind", "submission", "other", "similarity"])
        for row in sorted(map(_oriented, rows), key=lambda r: (r[0], r[1], -float(r[4]), r[2], r[3])):
            writer.writerow([csv_cell(cell) for cell in row])


def _oriented(row: list[str]) -> list[str]:
    """A pair of submissions names the two in one order, however it was computed (a regrade compares
    the fresh one with the stored ones): the same file as a full run, row for row."""
    if row[1] == "submissions" and row[3] < row[2]:
        return [row[0], row[1], row[3], row[2], row[4]]
    return list(row)
