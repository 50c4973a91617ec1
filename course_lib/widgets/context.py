"""What one request held: the data behind the context inspector and the budget explorer.

A `ContextView` is a plain, immutable description of a request: every message that went to the
model (marked developer / summary / kept history / new user message, with its token count), the
session's messages that were left out, the token budget and the current summary. It is built either
from a real `ChatReply` (what was sent) or from `ChatService.preview()` (what would be sent), so the
inspector and the budget explorer draw the same picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from course_lib.prompts.tags import unwrap_tag

DEVELOPER = "developer"
SUMMARY = "summary"
HISTORY = "history"
USER = "user"
TOOL = "tool"
DROPPED = "dropped"
SUMMARIZED = "summarized"

SENT_KINDS = (DEVELOPER, SUMMARY, HISTORY, USER, TOOL)
LEFT_OUT_KINDS = (DROPPED, SUMMARIZED)

KIND_LABELS = {
    DEVELOPER: "developer-инструкция",
    SUMMARY: "summary",
    HISTORY: "история в окне",
    USER: "новое сообщение",
    TOOL: "вызовы и результаты этого хода",
    DROPPED: "не отправлено",
    SUMMARIZED: "свёрнуто в сводку",
}

INSTRUCTION_ROLES = ("developer", "system")


class MessageCounter(Protocol):
    def count_message(self, message: Mapping[str, str]) -> int: ...


@dataclass(frozen=True)
class ContextEntry:
    """One message of a request (or of the session, when it was left out)."""

    kind: str
    role: str
    content: str
    tokens: int

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True)
class ContextView:
    """A request as the inspector shows it.

    `origin` is "reply" for a request that really went to the model and "preview" for one that
    `prepare()` built without calling it. `estimated_tokens` is the history policy's estimate
    (messages plus the reply primer); `prompt_tokens` is the provider's own figure, when known.
    """

    sent: tuple[ContextEntry, ...]
    left_out: tuple[ContextEntry, ...]
    estimated_tokens: int
    budget: int
    summary: str | None
    origin: str = "reply"
    summary_updated: bool = False
    prompt_tokens: int | None = None
    implementations: tuple[tuple[str, str], ...] = ()
    """Which implementation of each exercise ran for the reply (the reply's own record; see
    `course_lib.your_code.recording`); empty for a preview or when no exercise ran."""

    def tokens_of(self, kind: str) -> int:
        return sum(entry.tokens for entry in (*self.sent, *self.left_out) if entry.kind == kind)

    def count_of(self, kind: str) -> int:
        return sum(1 for entry in (*self.sent, *self.left_out) if entry.kind == kind)

    @property
    def overhead_tokens(self) -> int:
        """The part of the estimate that belongs to no single message (the reply primer)."""
        return max(0, self.estimated_tokens - sum(entry.tokens for entry in self.sent))

    @property
    def free_tokens(self) -> int:
        return max(0, self.budget - self.estimated_tokens)

    @property
    def used_percent(self) -> float:
        return 100.0 * self.estimated_tokens / self.budget if self.budget > 0 else 0.0


def is_summary_message(message: Mapping[str, Any]) -> bool:
    """True for the user-role data block that carries the conversation summary."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return False
    return unwrap_tag("conversation_summary", content) != content


def _in_exchange(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "tool" or bool(message.get("tool_calls"))


def classify_request(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kind of each message of a request built as [developer, summary?, history..., user], and
    of a tool loop's later requests: [..., user, the turn's tool_calls and results] (notebook 09)."""
    kinds: list[str] = []
    last = len(messages) - 1
    while last > 0 and _in_exchange(messages[last]):
        last -= 1  # the turn's own exchanges come after its user message
    asked = last if messages and messages[last].get("role") == "user" else len(messages)  # the new message
    for index, message in enumerate(messages):
        if index == 0 and message.get("role") in INSTRUCTION_ROLES:
            kinds.append(DEVELOPER)
        elif index > asked:
            kinds.append(TOOL)
        elif index == asked:
            kinds.append(USER)
        elif is_summary_message(message):
            kinds.append(SUMMARY)
        else:
            kinds.append(HISTORY)
    return kinds


def _entries(
    messages: Sequence[Mapping[str, Any]], kinds: Sequence[str], counter: MessageCounter
) -> tuple[ContextEntry, ...]:
    return tuple(
        ContextEntry(kind=kind, role=str(message.get("role", "")), content=_shown(message),
                     tokens=counter.count_message(message))
        for message, kind in zip(messages, kinds)
    )  # fmt: skip


def _shown(message: Mapping[str, Any]) -> str:
    """The message's text; for an assistant message with calls, the calls themselves."""
    calls = message.get("tool_calls") or []
    text = str(message.get("content") or "")
    shown = [f"⚙ {call['function']['name']}({call['function']['arguments']})" for call in calls]
    return "\n".join([text, *shown] if text else shown) if calls else text


def context_from_request(
    request_messages: Sequence[Mapping[str, Any]],
    session_history: Sequence[Mapping[str, Any]],
    *,
    counter: MessageCounter,
    estimated_tokens: int,
    budget: int,
    summary: str | None,
    summary_updated: bool = False,
    origin: str = "reply",
    prompt_tokens: int | None = None,
    implementations: Sequence[tuple[str, str]] = (),
) -> ContextView:
    """Describe a request and the session history it was built from.

    The window keeps the newest turns, so the history messages that were sent are the last ones of
    `session_history`, and everything before them was left out. When the summary was updated on this
    turn, the whole old history was folded into it and none of it was sent as exact messages.
    """
    kinds = classify_request(request_messages)
    sent = _entries(request_messages, kinds, counter)
    kept = sum(1 for kind in kinds if kind == HISTORY)
    left_out_messages = list(session_history[: max(0, len(session_history) - kept)])
    left_kind = SUMMARIZED if summary_updated else DROPPED
    left_out = _entries(left_out_messages, [left_kind] * len(left_out_messages), counter)
    return ContextView(
        sent=sent,
        left_out=left_out,
        estimated_tokens=estimated_tokens,
        budget=budget,
        summary=summary,
        origin=origin,
        summary_updated=summary_updated,
        prompt_tokens=prompt_tokens,
        implementations=tuple((str(name), str(implementation)) for name, implementation in implementations),
    )
