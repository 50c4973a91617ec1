"""What the customer types in a console chat, line by line, until /exit or the end of input."""

from __future__ import annotations

from collections.abc import Callable, Iterator

PROMPT = "\nВы: "


def typed_lines(
    read: Callable[[str], str], out: Callable[[str], None], *, stop_at_exit: bool = True
) -> Iterator[str]:
    """Each line typed; stops at /exit, at the end of a piped file (EOF) and at Ctrl-C/Ctrl-D.

    `stop_at_exit=False`: /exit is yielded like any line, for a console that decides each line with
    notebook 03's `console_command` (which also knows /EXIT)."""
    while True:
        try:
            line = read(PROMPT)
        except (EOFError, KeyboardInterrupt):
            out("")
            return
        if stop_at_exit and line.strip() == "/exit":
            return
        yield line
