"""What the customer types in a console chat, line by line, until /exit or the end of input."""

from __future__ import annotations

from collections.abc import Callable, Iterator

PROMPT = "\nВы: "


def typed_lines(read: Callable[[str], str], out: Callable[[str], None]) -> Iterator[str]:
    """Each line typed; stops at /exit, at the end of a piped file (EOF) and at Ctrl-C/Ctrl-D."""
    while True:
        try:
            line = read(PROMPT)
        except (EOFError, KeyboardInterrupt):
            out("")
            return
        if line.strip() == "/exit":
            return
        yield line
