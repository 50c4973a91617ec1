"""A chat message as the Chat Completions API takes it: the one type every layer shares.

Its own module, with no imports of the course, so the stores and the history can name it
without importing the LLM client (and its configuration).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

Role = Literal["developer", "system", "user", "assistant", "tool"]
VALID_ROLES: frozenset[str] = frozenset({"developer", "system", "user", "assistant"})
INSTRUCTION_ROLES: frozenset[str] = frozenset({"developer", "system"})
TOOL_ROLE = "tool"
"""The role of a tool's result. Not in VALID_ROLES: a plain chat history never holds one; only a
request that offers tools (and the exchanges of notebook 09) may."""


class ToolFunctionCall(TypedDict):
    name: str
    arguments: str  # JSON text, as the model wrote it (it may be invalid)


class ToolCall(TypedDict):
    """One call in an assistant message's `tool_calls`, as the Chat Completions API sends it."""

    id: str
    type: Literal["function"]
    function: ToolFunctionCall


class Message(TypedDict):
    role: Role
    content: str
    tool_calls: NotRequired[list[ToolCall]]
    """Only on an assistant message that calls tools; each call is answered by one `tool` message."""
    tool_call_id: NotRequired[str]
    """Only on a `tool` message: the id of the call it answers."""
