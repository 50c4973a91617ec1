"""Notebook 09: the line of the tool loop the student fills in.

`add_exchange(pending, calling, results)` is one round of the loop: the turn so far, then the
assistant message that carries the calls, then one result per call. The order is the protocol:
a result before its call (or without it) is what providers reject with HTTP 400. `ToolMemoryChat`
takes it as `add_exchange=`, so the notebook's chat runs on the student's lines once they pass.
"""

from __future__ import annotations


def add_exchange(pending: list[dict], calling: dict, results: list[dict]) -> list[dict]:
    """The turn with one more exchange, as a new list (`pending` stays as it was)."""
    return [*pending, calling, *results]
