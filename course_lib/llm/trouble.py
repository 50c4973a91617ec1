"""What went wrong with a real model in this process, even when the caller caught it.

A notebook's console catches a chat error, prints «Ошибка чата: …» and goes on — as a console
should. The check cell below it then fails with a bare `AssertionError`, far from the cause.
`LLMClient` notes here each call to a real model (not the offline one, whose faults notebooks
schedule on purpose) that failed or ran out of output tokens; `course_lib.notebook_errors` uses the
first such note to explain a later plain error as its consequence. Process-wide and tiny on purpose:
one note per kernel run, forgotten when a notebook's first cell runs again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


class ModelTrouble(Exception):
    """A failure a caller caught: describable like any course error, never raised."""


@dataclass(frozen=True)
class Note:
    cell: int | None  # the notebook cell that made the call, as Jupyter shows it: [N]
    error: BaseException  # the LLMClientError, or a ModelTrouble for a reply cut at the limit


_lock = threading.Lock()
_first: Note | None = None


def running_cell(shell: object | None = None) -> int | None:
    """The running notebook cell's [N] (None outside IPython). IPython's result for the running
    cell knows it; the shell's own counter may already point at the next cell."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return None
        shell = get_ipython()
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    number = getattr(result, "execution_count", None)
    return number if isinstance(number, int) else None


def note(error: BaseException) -> None:
    """Keep the first trouble only: later ones are usually its echo."""
    global _first
    with _lock:
        if _first is None:
            _first = Note(running_cell(), error)


def note_cut_reply(finish_reason: str | None) -> None:
    note(ModelTrouble(f"Модель не закончила ответ (finish_reason={finish_reason})."))


def first() -> Note | None:
    with _lock:
        return _first


def forget() -> None:
    global _first
    with _lock:
        _first = None
