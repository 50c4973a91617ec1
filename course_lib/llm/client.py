"""`LLMClient`: one call to a chat model through the official openai SDK.

The same code path serves every backend. A real provider is reached over HTTP; the offline teaching
model is reached through an in-process HTTP transport, so the SDK's request building, response
objects and exceptions are exactly those of a real call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Literal, TypedDict

import openai

from course_lib.config import Settings
from course_lib.llm.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMClientError,
    LLMConnectionError,
    LLMInstructionRoleError,
    LLMRateLimitError,
    LLMServerError,
    LLMStreamInterruptedError,
    LLMTimeoutError,
)
from course_lib.llm.offline import OFFLINE_BASE_URL, OfflineModel, OfflineTransport

logger = logging.getLogger(__name__)

Role = Literal["developer", "system", "user", "assistant"]
VALID_ROLES: frozenset[str] = frozenset({"developer", "system", "user", "assistant"})
INSTRUCTION_ROLES: frozenset[str] = frozenset({"developer", "system"})


class Message(TypedDict):
    role: Role
    content: str


@dataclass(frozen=True)
class LLMResult:
    """What one completion returned: the text plus everything needed to judge and account for it."""

    text: str | None
    finish_reason: str | None
    model: str
    response_id: str
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    cached_tokens: int | None = None
    """Input tokens the provider served from its prompt cache (billed at a discount)."""
    streamed: bool = False
    first_token_seconds: float | None = None
    """With streaming: how long until the first piece of text arrived."""


DeltaCallback = Callable[[str], None]


class LLMClient:
    """Sends a list of messages to the configured model and returns an `LLMResult`.

    The application writes instructions with the `developer` role. Servers that only know `system`
    (llama.cpp, Ollama, LM Studio, ...) get `system` when `LLM_INSTRUCTION_ROLE=system`; if a server
    rejects `developer` anyway, the client retries once with `system`, logs it, and keeps using it.
    """

    def __init__(self, settings: Settings, *, offline_model: OfflineModel | None = None) -> None:
        self._settings = settings
        self.backend = settings.effective_backend
        self._instruction_role: str = settings.instruction_role
        self.offline_model: OfflineModel | None = None

        if self.backend == "offline":
            self.offline_model = offline_model or OfflineModel()
            self._client = openai.OpenAI(
                api_key="offline-teaching-model",
                base_url=OFFLINE_BASE_URL,
                # The offline model's faults are scheduled on purpose; a retry would only wait.
                max_retries=0,
                timeout=settings.timeout_seconds,
                http_client=openai.DefaultHttpxClient(
                    transport=OfflineTransport(self.offline_model)
                ),
            )
        else:
            if settings.openai_api_key is None:
                raise LLMAuthenticationError(
                    "Не задан OPENAI_API_KEY: добавьте ключ в .env или используйте LLM_BACKEND=offline."
                )
            self._client = openai.OpenAI(
                api_key=settings.openai_api_key.get_secret_value(),
                base_url=settings.openai_base_url,
                max_retries=settings.max_retries,
                timeout=settings.timeout_seconds,
            )

    @property
    def model(self) -> str:
        """The model name sent with each request."""
        return self._settings.model

    @property
    def instruction_role(self) -> str:
        """The role instructions are sent with right now (may have fallen back to `system`)."""
        return self._instruction_role

    def generate(
        self,
        messages: Sequence[Message],
        *,
        model: str | None = None,
        on_delta: DeltaCallback | None = None,
    ) -> LLMResult:
        """One chat completion. Raises an `LLMClientError` subclass on any failure.

        `model` overrides the configured model for this call (e.g. a cheaper one for summaries).
        `on_delta` streams the reply: it is called with each piece of text as it arrives, and the
        result is returned once the stream ended. A stream that breaks off raises like any other
        failure — the pieces already passed to `on_delta` are then an unfinished reply.
        """
        _validate_messages(messages)
        model_name = model or self._settings.model
        try:
            return self._complete(messages, self._instruction_role, model_name, on_delta)
        except openai.APIStatusError as error:
            if self._instruction_role == "developer" and _rejects_developer_role(error):
                return self._retry_with_system_role(messages, model_name, on_delta)
            raise _translate(error) from error
        except openai.APIError as error:
            raise _translate(error) from error

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _server_label(self) -> str:
        """Who answers, named honestly in warnings: the offline model is not api.openai.com."""
        if self.backend == "offline":
            return "Офлайн-модель (в роли OpenAI-совместимого сервера)"
        return f"Сервер {self._settings.openai_base_url or 'api.openai.com'}"

    def _retry_with_system_role(
        self, messages: Sequence[Message], model_name: str, on_delta: DeltaCallback | None
    ) -> LLMResult:
        logger.warning(
            "%s отклонил роль developer; повторяем с ролью system. "
            "Чтобы не тратить лишний запрос, задайте LLM_INSTRUCTION_ROLE=system.",
            self._server_label(),
        )
        try:
            result = self._complete(messages, "system", model_name, on_delta)
        except openai.APIStatusError as error:
            if _rejects_developer_role(error) or _mentions_role(error):
                raise LLMInstructionRoleError(
                    "Сервер не принимает ни роль developer, ни system для инструкции "
                    f"(HTTP {error.status_code}). Проверьте LLM_INSTRUCTION_ROLE в .env "
                    "и документацию сервера."
                ) from error
            raise _translate(error) from error
        except openai.APIError as error:
            raise _translate(error) from error
        self._instruction_role = "system"
        return result

    def _complete(
        self,
        messages: Sequence[Message],
        instruction_role: str,
        model_name: str,
        on_delta: DeltaCallback | None = None,
    ) -> LLMResult:
        payload = [
            {
                "role": instruction_role if m["role"] in INSTRUCTION_ROLES else m["role"],
                "content": m["content"],
            }
            for m in messages
        ]
        # OpenAI's own API names the limit max_completion_tokens; most compatible servers
        # (the ones that also want the `system` role) know only max_tokens.
        limit_name = "max_completion_tokens" if instruction_role == "developer" else "max_tokens"
        options: dict[str, Any] = {limit_name: self._settings.max_output_tokens}
        if on_delta is not None:
            return self._stream(model_name, payload, options, on_delta)
        completion = self._client.chat.completions.create(
            model=model_name,
            messages=payload,  # type: ignore[arg-type]
            **options,
        )
        if not completion.choices:
            raise LLMServerError("Провайдер вернул ответ без вариантов (choices пуст).")
        choice = completion.choices[0]
        usage = completion.usage
        return LLMResult(
            text=choice.message.content,
            finish_reason=choice.finish_reason,
            model=completion.model,
            response_id=completion.id,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            total_tokens=usage.total_tokens if usage else None,
            cached_tokens=_cached_tokens(usage),
        )

    def _stream(
        self, model_name: str, payload: list[dict[str, str]], options: dict[str, Any], on_delta: DeltaCallback
    ) -> LLMResult:
        started = perf_counter()
        first_token: float | None = None
        pieces: list[str] = []
        finish_reason: str | None = None
        usage = None
        response_model, response_id = model_name, ""
        # Usage arrives in a last chunk with no choices, only when asked for.
        stream = self._client.chat.completions.create(
            model=model_name,
            messages=payload,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
            **options,
        )
        with stream:
            for chunk in _interrupted_as_error(stream, pieces):
                response_model, response_id = chunk.model or response_model, chunk.id or response_id
                if chunk.usage is not None:
                    usage = chunk.usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                text = choice.delta.content if choice.delta else None
                if text:
                    if first_token is None:
                        first_token = perf_counter() - started
                    pieces.append(text)
                    on_delta(text)
                if choice.finish_reason is not None:
                    finish_reason = choice.finish_reason
        return LLMResult(
            text="".join(pieces) if pieces or finish_reason else None,
            finish_reason=finish_reason,
            model=response_model,
            response_id=response_id,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            total_tokens=usage.total_tokens if usage else None,
            cached_tokens=_cached_tokens(usage),
            streamed=True,
            first_token_seconds=first_token,
        )


def _interrupted_as_error(stream: Any, pieces: list[str]) -> Any:
    """The stream's chunks; a connection lost mid-reply is said as such, not as "cannot connect"."""
    try:
        yield from stream
    except (openai.APIConnectionError, openai.APITimeoutError) as error:
        raise LLMStreamInterruptedError(
            f"Поток ответа оборвался после {len(pieces)} фрагментов текста; ответ не закончен."
        ) from error


def _cached_tokens(usage: Any) -> int | None:
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return cached if isinstance(cached, int) else None


def generate_with_model(client: Any, messages: Sequence[Message], model: str | None) -> LLMResult:
    """`client.generate(messages)`, naming `model` only when one is set.

    A helper service (summaries, memory) may use its own, cheaper model; test doubles and metered
    clients whose `generate` takes only the messages still work when it does not.
    """
    if model is None:
        return client.generate(messages)
    return client.generate(messages, model=model)


def _validate_messages(messages: Sequence[Message]) -> None:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise LLMBadRequestError("Список сообщений для модели пуст или не является списком.")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise LLMBadRequestError(f"Сообщение №{index} должно быть словарём с role и content.")
        role, content = message.get("role"), message.get("content")
        if role not in VALID_ROLES:
            raise LLMBadRequestError(f"Сообщение №{index}: неизвестная роль {role!r}.")
        if not isinstance(content, str):
            raise LLMBadRequestError(f"Сообщение №{index}: content должен быть строкой.")


def _error_text(error: openai.APIStatusError) -> str:
    body: Any = error.body
    return f"{error.message} {body}".lower()


def _rejects_developer_role(error: openai.APIStatusError) -> bool:
    # llama.cpp-style servers answer 400/422/500 with a validation error that names the role.
    return error.status_code in {400, 422, 500} and "developer" in _error_text(error)


def _mentions_role(error: openai.APIStatusError) -> bool:
    return error.status_code in {400, 422, 500} and "role" in _error_text(error)


def _translate(error: openai.APIError) -> LLMClientError:
    """Map the SDK's exception to ours, with a message a Russian-speaking student can act on."""
    if isinstance(error, openai.APITimeoutError):
        return LLMTimeoutError("Модель не ответила вовремя (таймаут). Попробуйте ещё раз.")
    if isinstance(error, openai.APIConnectionError):
        return LLMConnectionError(
            "Не удалось подключиться к серверу модели. Проверьте сеть и OPENAI_BASE_URL."
        )
    if isinstance(error, openai.RateLimitError):
        return LLMRateLimitError(
            "Превышен лимит запросов или исчерпана квота (HTTP 429). Подождите и повторите."
        )
    if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return LLMAuthenticationError(
            f"Ключ API не принят (HTTP {error.status_code}). Проверьте OPENAI_API_KEY."
        )
    if isinstance(error, openai.APIStatusError):
        if error.status_code >= 500:
            return LLMServerError(f"Ошибка на стороне провайдера (HTTP {error.status_code}).")
        return LLMBadRequestError(
            f"Провайдер отклонил запрос (HTTP {error.status_code}): {error.message}"
        )
    return LLMServerError(f"Некорректный ответ провайдера: {error}")
