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
