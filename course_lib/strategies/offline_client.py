"""`OfflineDirectClient`: the offline teaching model without the SDK's HTTP layer, for benchmarks.

`LLMClient` reaches the offline model through the real openai SDK, which is the point in the lessons.
For a 200-turn full-history benchmark that path is slow: the SDK re-validates every message of every
request, so most of the time goes into the SDK, not the model. This client sends the very same JSON
body straight to `OfflineModel.complete()` and reads the same JSON answer, so replies, usage,
finish_reason and ids are identical (the tests check it); only the HTTP layer is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from course_lib.config import Settings
from course_lib.llm.client import INSTRUCTION_ROLES, LLMResult, Message
from course_lib.llm.errors import (
    LLMBadRequestError,
    LLMClientError,
    LLMConnectionError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from course_lib.llm.offline import OfflineModel
from course_lib.llm.offline.faults import SimulatedConnectionError, SimulatedTimeout
from course_lib.llm.tool_calls import read_call


class OfflineDirectClient:
    """`.generate(messages) -> LLMResult`, like `LLMClient`, answered by an in-process `OfflineModel`."""

    backend = "offline"

    def __init__(
        self,
        offline_model: OfflineModel | None = None,
        *,
        model: str = "gpt-4.1",
        max_output_tokens: int = 500,
        instruction_role: str = "developer",
    ) -> None:
        self.offline_model = offline_model or OfflineModel()
        self.model = model
        self.max_output_tokens = max_output_tokens
        self.instruction_role = instruction_role

    @classmethod
    def from_settings(cls, settings: Settings, offline_model: OfflineModel | None = None) -> OfflineDirectClient:
        return cls(
            offline_model,
            model=settings.model,
            max_output_tokens=settings.max_output_tokens,
            instruction_role=settings.instruction_role,
        )

    def generate(
        self,
        messages: Sequence[Message],
        *,
        model: str | None = None,
        tools: Sequence[dict] | None = None,
        tool_choice: object = None,
        response_format: dict | None = None,
    ) -> LLMResult:
        """As `LLMClient.generate` (no streaming): the same options reach the model in the same JSON."""
        limit_name = "max_completion_tokens" if self.instruction_role == "developer" else "max_tokens"
        payload: dict = {
            "messages": [_wire(m, self.instruction_role) for m in messages],
            "model": model or self.model,
            limit_name: self.max_output_tokens,
        }
        for name, value in (("tools", tools), ("tool_choice", tool_choice), ("response_format", response_format)):
            if value is not None:
                payload[name] = value
        try:
            response = self.offline_model.complete(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        except SimulatedTimeout as fault:
            raise LLMTimeoutError(f"Модель не ответила вовремя (таймаут): {fault}") from fault
        except SimulatedConnectionError as fault:
            raise LLMConnectionError(f"Не удалось подключиться к модели: {fault}") from fault
        if response.status_code != 200:
            raise _error(response.status_code, response.body)
        body = response.body
        choice = body["choices"][0]
        usage = body["usage"]
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        calls = tuple(
            read_call(call.get("id"), call["function"].get("name"), call["function"].get("arguments"))
            for call in choice["message"].get("tool_calls") or ()
        )
        return LLMResult(
            text=choice["message"]["content"],
            finish_reason=choice["finish_reason"],
            model=body["model"],
            response_id=body["id"],
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
            cached_tokens=cached if isinstance(cached, int) else None,
            tool_calls=calls,
        )

    def close(self) -> None:
        """Nothing to release; present so the client can stand in for `LLMClient`."""


def _wire(message: Message, instruction_role: str) -> dict:
    """A message as the SDK would send it: the instruction under the server's role, tool fields kept."""
    wire = dict(message)
    if wire["role"] in INSTRUCTION_ROLES:
        wire["role"] = instruction_role
    return wire


def _error(status_code: int, body: dict) -> LLMClientError:
    message = (body.get("error") or {}).get("message", "")
    if status_code == 429:
        return LLMRateLimitError(f"Превышен лимит запросов (HTTP 429): {message}")
    if status_code >= 500:
        return LLMServerError(f"Ошибка на стороне модели (HTTP {status_code}): {message}")
    return LLMBadRequestError(f"Модель отклонила запрос (HTTP {status_code}): {message}")
