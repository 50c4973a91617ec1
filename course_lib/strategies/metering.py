"""Counting what a strategy asks of the model: every call, its purpose, its usage and its time.

A strategy talks to the model only through `CallMeter.client(purpose)`, so nothing escapes the count:
the chat request of each turn is a "chat" call, a compression is a "summary" call. The meter also
separates the time spent inside the model from the application's own time (building the request).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from time import perf_counter
from typing import Literal, Protocol, TypeVar

from course_lib.llm.client import LLMResult, Message

Purpose = Literal["chat", "summary"]
T = TypeVar("T")


class GeneratingClient(Protocol):
    """Anything with `LLMClient.generate`'s signature (the real client, the direct offline one)."""

    def generate(self, messages: Sequence[Message]) -> LLMResult: ...


@dataclass(frozen=True)
class ModelCall:
    """One successful model call as the meter saw it."""

    purpose: Purpose
    messages: tuple[Message, ...]
    result: LLMResult
    seconds: float
    scripted: bool = False
    """Answered from a script, not by the model (see `CallMeter.scripted`): no tokens, no cost."""

    @property
    def prompt_tokens(self) -> int:
        return self.result.prompt_tokens or 0

    @property
    def completion_tokens(self) -> int:
        return self.result.completion_tokens or 0

    @property
    def cached_tokens(self) -> int:
        return self.result.cached_tokens or 0


class MeteredClient:
    """A client for one purpose: passes calls through and reports each to its meter."""

    def __init__(self, meter: CallMeter, purpose: Purpose) -> None:
        self._meter = meter
        self.purpose = purpose

    def generate(self, messages: Sequence[Message]) -> LLMResult:
        return self._meter._generate(self.purpose, messages)


class CallMeter:
    """Wraps one model client and records every successful call made through its purpose clients."""

    def __init__(self, llm_client: GeneratingClient) -> None:
        self._llm_client = llm_client
        self._calls: list[ModelCall] = []
        self._script: str | None = None

    @contextmanager
    def scripted(self, reply: str) -> Iterator[None]:
        """Inside, a "chat" call gets `reply` without asking the model; other purposes (a summary)
        still go to the model. The memory benchmark replays recorded conversations this way: the
        support lines are given, what memory does with them is measured."""
        self._script = reply
        try:
            yield
        finally:
            self._script = None

    def client(self, purpose: Purpose) -> MeteredClient:
        return MeteredClient(self, purpose)

    @property
    def calls(self) -> tuple[ModelCall, ...]:
        return tuple(self._calls)

    def measure(self, action: Callable[[], T]) -> tuple[T, tuple[ModelCall, ...], float]:
        """Run `action`; return its value, the calls it made, and its time minus the calls' time."""
        first = len(self._calls)
        started = perf_counter()
        value = action()
        elapsed = perf_counter() - started
        calls = tuple(self._calls[first:])
        return value, calls, max(0.0, elapsed - sum(call.seconds for call in calls))

    def _generate(self, purpose: Purpose, messages: Sequence[Message]) -> LLMResult:
        request = tuple({"role": m["role"], "content": m["content"]} for m in messages)
        if purpose == "chat" and self._script is not None:
            result = LLMResult(self._script, "stop", "scripted", "scripted", 0, 0, 0)
            self._calls.append(ModelCall(purpose, request, result, 0.0, scripted=True))  # type: ignore[arg-type]
            return result
        started = perf_counter()
        result = self._llm_client.generate(messages)
        seconds = perf_counter() - started
        self._calls.append(ModelCall(purpose, request, result, seconds))  # type: ignore[arg-type]
        return result
