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

    def generate(self, messages: Sequence[Message]) -> LLMResult:
        limit_name = "max_completion_tokens" if self.instruction_role == "developer" else "max_tokens"
        payload = {
            "messages": [
                {
                    "role": self.instruction_role if m["role"] in INSTRUCTION_ROLES else m["role"],
                    "content": m["content"],
                }
                for m in messages
            ],
            "model": self.model,
            limit_name: self.max_output_tokens,
        }
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
        return LLMResult(
            text=choice["message"]["content"],
            finish_reason=choice["finish_reason"],
            model=body["model"],
            response_id=body["id"],
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
            cached_tokens=cached if isinstance(cached, int) else None,
        )

    def close(self) -> None:
        """Nothing to release; present so the client can stand in for `LLMClient`."""


def _error(status_code: int, body: dict) -> LLMClientError:
    message = (body.get("error") or {}).get("message", "")
    if status_code == 429:
        return LLMRateLimitError(f"Превышен лимит запросов (HTTP 429): {message}")
    if status_code >= 500:
        return LLMServerError(f"Ошибка на стороне модели (HTTP {status_code}): {message}")
    return LLMBadRequestError(f"Модель отклонила запрос (HTTP {status_code}): {message}")
