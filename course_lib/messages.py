"""A chat message as the Chat Completions API takes it: the one type every layer shares.

Its own module, with no imports of the course, so the stores and the history can name it
without importing the LLM client (and its configuration).
"""

from __future__ import annotations

from typing import Literal, TypedDict

Role = Literal["developer", "system", "user", "assistant"]
VALID_ROLES: frozenset[str] = frozenset({"developer", "system", "user", "assistant"})
INSTRUCTION_ROLES: frozenset[str] = frozenset({"developer", "system"})


class Message(TypedDict):
    role: Role
    content: str
