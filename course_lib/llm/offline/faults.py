"""Faults the offline model can be told to produce, for the reliability lessons and tests.

A fault is consumed by one chat-completions request, first scheduled first used. `after=n` lets n
requests through untouched before the fault applies (for example, the summary call succeeds and
the reply that follows it fails).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

FAULT_KINDS: tuple[str, ...] = (
    "timeout", "connection", "rate_limit", "server_error", "truncated", "empty", "stream_cut",
)
"""timeout → openai.APITimeoutError; connection → openai.APIConnectionError; rate_limit → HTTP 429
(openai.RateLimitError); server_error → HTTP 500 (openai.InternalServerError); truncated → a reply cut
to a few tokens with finish_reason "length"; empty → content "" with finish_reason "stop";
stream_cut → a streamed reply whose connection drops after `chunks` content chunks (the SDK raises
openai.APIConnectionError while iterating; a request that did not stream gets the same error)."""
DEFAULT_STREAM_CUT_CHUNKS = 3


class SimulatedTimeout(Exception):
    """The model "did not answer in time"; the transport turns it into httpx2.ReadTimeout."""


class SimulatedConnectionError(Exception):
    """The model "could not be reached"; the transport turns it into httpx2.ConnectError."""


@dataclass
class Fault:
    """One scheduled fault; `chunks` only matters for `stream_cut`."""

    kind: str
    after: int = 0
    chunks: int = DEFAULT_STREAM_CUT_CHUNKS


class FaultQueue:
    """A thread-safe FIFO of scheduled faults."""

    def __init__(self) -> None:
        self._items: deque[Fault] = deque()
        self._lock = threading.Lock()

    def schedule(self, kind: str, times: int = 1, after: int = 0, chunks: int = DEFAULT_STREAM_CUT_CHUNKS) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(
                f"Неизвестный вид сбоя {kind!r}. Доступные виды: {', '.join(FAULT_KINDS)}."
            )
        if isinstance(times, bool) or not isinstance(times, int) or times < 1:
            raise ValueError(
                f"times должно быть целым числом не меньше 1, получено {times!r}. "
                f"Доступные виды сбоев: {', '.join(FAULT_KINDS)}."
            )
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise ValueError(f"after должно быть целым неотрицательным числом, получено {after!r}.")
        if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 0:
            raise ValueError(f"chunks должно быть целым неотрицательным числом, получено {chunks!r}.")
        with self._lock:
            self._items.append(Fault(kind, after, chunks))
            self._items.extend(Fault(kind, 0, chunks) for _ in range(times - 1))

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def pending(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(item.kind for item in self._items)

    def take(self) -> Fault | None:
        """The fault for the request being handled now, or None (which may use up an `after`)."""
        with self._lock:
            if not self._items:
                return None
            head = self._items[0]
            if head.after > 0:
                head.after -= 1
                return None
            self._items.popleft()
            return head
