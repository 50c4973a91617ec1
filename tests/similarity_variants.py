"""Plagiarised copies of the reference solutions (issue 21, item 8), made by syntax-tree rewrites, and
the honest set: the references and independently written solutions (tests/similarity_honest/)."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HONEST = ROOT / "tests" / "similarity_honest"
VARIANTS = ("copy", "renamed", "reordered", "unused_assignment", "unused_helper_if_false", "combined")
_KEEP = frozenset(dir(builtins)) | {"self", "cls"}


def reference(name: str) -> str:
    return (ROOT / "solutions" / f"{name}.py").read_text(encoding="utf-8")


class _Rename(ast.NodeTransformer):
    """Every name the file defines (but the entry) gets another name."""

    def __init__(self, keep: str) -> None:
        self.keep = keep

    def _new(self, name: str) -> str:
        return name if name in _KEEP or name == self.keep or name.startswith("__") else f"renamed_{name.strip('_')}_x"

    def visit_Name(self, node):
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._new(node.arg)
        return node

    def visit_FunctionDef(self, node):
        if not (node.name.startswith("__") or node.name in ("add_turn", "get_messages", "reset")):
            node.name = self._new(node.name)
        self.generic_visit(node)
        return node


def _entry_function(tree: ast.Module, entry: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            return node
        if isinstance(node, ast.ClassDef) and node.name == entry:
            methods = [item for item in node.body if isinstance(item, ast.FunctionDef)]
            return max(methods, key=lambda item: len(item.body)) if methods else None
    return None


def _reorder(tree: ast.Module) -> bool:
    """Reverse the top-level functions (and a class's methods); whether any order changed."""
    changed = False
    for holder in [tree, *(node for node in tree.body if isinstance(node, ast.ClassDef))]:
        places = [i for i, node in enumerate(holder.body) if isinstance(node, ast.FunctionDef)]
        if len(places) >= 2:
            functions = [holder.body[i] for i in places]
            for i, function in zip(places, reversed(functions)):
                holder.body[i] = function
            changed = True
    return changed


def _insert(tree: ast.Module, entry: str, code: str) -> None:
    function = _entry_function(tree, entry)
    body = function.body if function is not None else tree.body
    body.insert(max(1, len(body) // 2), ast.parse(code).body[0])


def variant(name: str, entry: str, kind: str) -> str | None:
    """The plagiarised copy, or None for "reordered" when the file has one function only."""
    tree = ast.parse(reference(name))
    if kind in ("reordered", "combined"):
        if not _reorder(tree) and kind == "reordered":
            return None
    if kind in ("unused_assignment", "combined"):
        _insert(tree, entry, "checked_total = 0")
    if kind in ("unused_helper_if_false", "combined"):
        _insert(tree, entry, "if False:\n    print('debug', len(str(entry_value)))")
        helper = ast.parse("def _format_debug(value):\n    text = str(value)\n    return text.strip().lower()[:80]\n")
        tree.body.insert(0, helper.body[0])
    if kind in ("renamed", "combined"):
        tree = _Rename(entry).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


def honest_sources() -> dict[str, list[tuple[str, str]]]:
    """Exercise -> [(label, source)] of independently written solutions: the reference and ours."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(HONEST.glob("*.py")):
        found[path.stem] = [("reference", reference(path.stem)), ("independent", path.read_text(encoding="utf-8"))]
    return found


# --- one rewrite each: what a copier does to hide a copy (issue 32's red team) ---------------------

REWRITES = ("if_else_swapped", "strings_split", "self_assignments", "for_to_while", "extracted_helper",
            "swapped_comparisons", "comprehension_to_loop")
_MIRROR = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


class _Changes(ast.NodeTransformer):
    changed = False


class _SwapIfElse(_Changes):
    """`if c: A else: B` → `if not c: B else: A`, the same for `a if c else b`; and an early
    `if c: return X` followed by the rest → `if not c: <the rest> else: return X`."""

    def visit_If(self, node):
        self.generic_visit(node)
        if node.orelse:
            node.test = ast.UnaryOp(ast.Not(), node.test)
            node.body, node.orelse = node.orelse, node.body
            self.changed = True
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        self.changed = True
        return ast.IfExp(ast.UnaryOp(ast.Not(), node.test), node.orelse, node.body)

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        body = node.body
        for index, statement in enumerate(body[:-1]):
            if isinstance(statement, ast.If) and not statement.orelse and isinstance(statement.body[-1], ast.Return):
                rest = body[index + 1 :]
                swapped = ast.If(ast.UnaryOp(ast.Not(), statement.test), rest, statement.body)
                node.body = body[:index] + [swapped]
                self.changed = True
                break
        return node


class _SplitStrings(_Changes):
    def visit_JoinedStr(self, node):
        return node  # the parts of an f-string stay as they are

    def visit_Constant(self, node):
        if isinstance(node.value, str) and len(node.value) >= 4:
            self.changed = True
            half = len(node.value) // 2
            return ast.BinOp(ast.Constant(node.value[:half]), ast.Add(), ast.Constant(node.value[half:]))
        return node


class _StatementRewrite(_Changes):
    """Rewrites statements one by one in every statement list: `replace` returns what stands
    instead of a statement, or None to keep it."""

    top_level = True  # also the module's and a class's own statements

    def replace(self, statement: ast.stmt) -> list[ast.stmt] | None:
        raise NotImplementedError

    def generic_visit(self, node):
        super().generic_visit(node)
        if not self.top_level and isinstance(node, (ast.Module, ast.ClassDef)):
            return node
        for field in ("body", "orelse"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                out = []
                for statement in value:
                    replaced = self.replace(statement)
                    if replaced is None:
                        out.append(statement)
                    else:
                        self.changed = True
                        out += replaced
                setattr(node, field, out)
        return node


class _SelfAssign(_StatementRewrite):
    top_level = False

    def replace(self, statement):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            return [statement, ast.Assign([ast.Name(name, ast.Store())], ast.Name(name, ast.Load()))]
        return None


class _ForToWhile(_StatementRewrite):
    def replace(self, statement):
        if not isinstance(statement, ast.For) or statement.orelse:
            return None
        start = ast.parse("loop_items = list(ITER)\nloop_index = 0").body
        start[0].value.args = [statement.iter]
        loop = ast.parse("while loop_index < len(loop_items):\n    TARGET = loop_items[loop_index]").body[0]
        loop.body[0].targets = [statement.target]
        loop.body += statement.body + ast.parse("loop_index += 1").body
        return [*start, loop]


class _MirrorComparisons(_Changes):
    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in _MIRROR:
            self.changed = True
            return ast.Compare(node.comparators[0], [_MIRROR[type(node.ops[0])]()], [node.left])
        return node


class _ComprehensionToLoop(_StatementRewrite):
    def _loop(self, comprehension: ast.ListComp, name: str) -> list[ast.stmt]:
        generator = comprehension.generators[0]
        append = ast.Expr(ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "append", ast.Load()), [comprehension.elt], []))
        inner: ast.stmt = append
        for condition in reversed(generator.ifs):
            inner = ast.If(condition, [inner], [])
        return [ast.Assign([ast.Name(name, ast.Store())], ast.List([], ast.Load())),
                ast.For(generator.target, generator.iter, [inner], [])]

    def replace(self, statement):
        comp = getattr(statement, "value", None)
        if not (isinstance(comp, ast.ListComp) and len(comp.generators) == 1):
            return None
        if isinstance(statement, ast.Return):
            return [*self._loop(comp, "collected"), ast.Return(ast.Name("collected", ast.Load()))]
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            return self._loop(comp, statement.targets[0].id)
        return None


def _extract_helper(tree: ast.Module, entry: str) -> bool:
    function = _entry_function(tree, entry)
    if function is None or len(function.body) < 3:
        return False
    start = len(function.body) // 2
    moved = function.body[start:]
    parameters = [arg.arg for arg in function.args.args]
    helper = ast.FunctionDef("_finish", ast.arguments([], [ast.arg(p) for p in parameters], None, [], [], None, []),
                             moved, [], None, None)  # fmt: skip
    call = ast.Call(ast.Name("_finish", ast.Load()), [ast.Name(p, ast.Load()) for p in parameters], [])
    function.body = function.body[:start] + [ast.Return(call)]
    tree.body.insert(0, helper)
    return True


def rewrite(name: str, entry: str, kind: str) -> str | None:
    """The reference with one rewrite, or None where that rewrite does not apply to the file."""
    tree = ast.parse(reference(name))
    if kind == "extracted_helper":
        changed = _extract_helper(tree, entry)
    else:
        transformer = {"if_else_swapped": _SwapIfElse, "strings_split": _SplitStrings,
                       "self_assignments": _SelfAssign, "for_to_while": _ForToWhile,
                       "swapped_comparisons": _MirrorComparisons,
                       "comprehension_to_loop": _ComprehensionToLoop}[kind]()  # fmt: skip
        tree = transformer.visit(tree)
        changed = transformer.changed
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None
