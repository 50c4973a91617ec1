"""`LLMClient`: one call to a chat model through the official openai SDK.

The same code path serves every backend. A real provider is reached over HTTP; the offline teaching
model is reached through an in-process HTTP transport, so the SDK's request building, response
objects and exceptions are exactly those of a real call.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from course_lib.config import Settings
from course_lib.llm.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMClientError,
    LLMConnectionError,
    LLMContextOverflowError,
    LLMInstructionRoleError,
    LLMRateLimitError,
    LLMResponseFormatError,
    LLMServerError,
    LLMStreamInterruptedError,
    LLMTimeoutError,
    LLMToolSequenceError,
)
from course_lib.llm.tool_calls import (
    StreamedCalls,
    ToolCallRequest,
    ToolSpec,
    calls_in_text,
    offered,
    calls_of_message,
    check_tools,
    check_wire_message,
)
from course_lib.llm import trouble
from course_lib.llm.offline import OFFLINE_BASE_URL, OfflineModel, OfflineTransport
from course_lib.russian import tokens
from course_lib.messages import INSTRUCTION_ROLES, TOOL_ROLE, VALID_ROLES, Message, Role  # noqa: F401 - re-exported

logger = logging.getLogger(__name__)



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
    tool_calls: tuple[ToolCallRequest, ...] = ()
    """The calls the model asked for (`finish_reason == "tool_calls"`), in its order."""


DeltaCallback = Callable[[str], None]
ResponseFormat = Mapping[str, Any]
DETAIL_CHARS = 300
"""How much of a server's own error text goes into our message."""
PROBE_TIMEOUT_SECONDS = 5.0


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
        elif settings.openai_api_key is None:
            raise LLMAuthenticationError(
                "Не задан OPENAI_API_KEY: добавьте ключ в .env или используйте LLM_BACKEND=offline."
            )
        self._sdk_client = self._new_sdk_client()
        self._closed = False
        # Learned from the server as the session goes: None = not known (yet).
        self._structured_output: bool | str | None = None  # True, "json_object", False: what the server took
        self._context_size: int | None = None
        self._context_size_asked = False
        self._text_calls_noted = False
        self._lock = threading.Lock()

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
        response_format: ResponseFormat | None = None,
        max_output_tokens: int | None = None,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
    ) -> LLMResult:
        """One chat completion. Raises an `LLMClientError` subclass on any failure.

        `model` overrides the configured model for this call (e.g. a cheaper one for summaries).
        `on_delta` streams the reply: it is called with each piece of text as it arrives, and the
        result is returned once the stream ended. A stream that breaks off raises like any other
        failure — the pieces already passed to `on_delta` are then an unfinished reply.
        `response_format` asks for structured output (a JSON schema); a server that refuses it is
        asked again without it, once, and not asked again (the caller validates the text anyway).
        `max_output_tokens` overrides `MAX_OUTPUT_TOKENS` for this call.
        `tools` offers functions the model may call (Chat Completions `tools`, `tool_choice` as the
        API takes it); the calls come back in `LLMResult.tool_calls`, their arguments parsed (a call
        whose JSON is invalid carries `error` instead). Messages may then hold the exchange: an
        assistant message with `tool_calls` and one `tool` message per call.
        """
        _validate_messages(messages)
        if tools is not None:
            try:
                tools = check_tools(tools)
            except ValueError as error:
                raise LLMBadRequestError(str(error)) from None
        elif tool_choice is not None:
            raise LLMBadRequestError("tool_choice без tools: модели нечего вызывать.")
        options = _Options(
            model or self._settings.model,
            on_delta,
            self._learned_format(response_format),
            max_output_tokens or self._settings.max_output_tokens,
            tuple(tools or ()),
            tool_choice,
        )
        try:
            result = self._complete_with_fallbacks(messages, options)
        except openai.APIError as error:
            translated = self._translate(error)
            if self.backend != "offline":  # offline faults are scheduled by the lesson itself
                trouble.note(translated)
            raise translated from error
        if result.finish_reason == "length" and self.backend != "offline":
            trouble.note_cut_reply(result.finish_reason)
        if options.tools and not result.tool_calls and result.text:
            result = self._read_text_calls(result, offered(options.tools))
        return result

    def _read_text_calls(self, result: LLMResult, names: set[str]) -> LLMResult:
        """A reply that writes its calls as text is read as those calls (said once in the log)."""
        text, calls = calls_in_text(result.text or "", names)
        if not calls:
            return result
        if not self._text_calls_noted:
            self._text_calls_noted = True
            logger.warning(
                "%s вернул вызов инструмента текстом, а не в tool_calls: курс читает его как "
                "вызов. Так отвечает, например, llama-cpp-python с форматом чата по умолчанию: "
                "инструменты он показывает модели, но её вызовы не разбирает.",
                self._server_label(),
            )
        return dataclasses.replace(result, text=text or None, tool_calls=calls, finish_reason="tool_calls")

    def measure_prompt_tokens(self, messages: Sequence[Message]) -> int | None:
        """The server's own count of these messages' input tokens, or None if it cannot tell.

        One non-streamed call with a 1-token reply: servers that send no usage in streams
        (llama.cpp) still report it here, and their prompt cache makes the real request that
        follows cheap. Never raises: a failed measurement only means no correction yet.
        """
        try:
            result = self.generate(messages, max_output_tokens=1)
        except LLMClientError as error:
            logger.info("Не удалось измерить токены на сервере: %s", error)
            return None
        return result.prompt_tokens

    @property
    def needs_token_probe(self) -> bool:
        """Whether the course's estimate may differ from the server's count (another tokenizer).

        The offline model and api.openai.com count like the course (o200k_base); any other
        OpenAI-compatible server (llama.cpp, Ollama, LM Studio, a proxy) may not.
        """
        return self.backend != "offline" and self._settings.openai_base_url is not None

    def context_size(self) -> int | None:
        """The server's context window in tokens, where it reports one (llama.cpp `/props`,
        `/v1/models` meta), or as learned from a context-overflow error; None when unknown."""
        with self._lock:
            if self._context_size is not None or self._context_size_asked or not self.needs_token_probe:
                return self._context_size
            self._context_size_asked = True
        size = self._ask_context_size()
        with self._lock:
            self._context_size = self._context_size or size
            return self._context_size

    def context_warning(self, input_token_budget: int) -> str | None:
        """A Russian warning when the input budget plus the reply limit exceeds the server's context."""
        size = self.context_size()
        needed = input_token_budget + self._settings.max_output_tokens
        if size is None or needed <= size:
            return None
        return (
            f"Бюджет входа CHAT_INPUT_TOKEN_BUDGET={input_token_budget} плюс лимит ответа "
            f"MAX_OUTPUT_TOKENS={self._settings.max_output_tokens} = {tokens(needed)}, а контекст модели "
            f"на сервере — {size}. Длинный разговор не поместится: уменьшите CHAT_INPUT_TOKEN_BUDGET "
            f"(например, до {max(size - self._settings.max_output_tokens - 64, 1)}) или запустите сервер "
            "с большим контекстом (llama.cpp: --ctx-size / --n_ctx)."
        )

    def _new_sdk_client(self) -> openai.OpenAI:
        settings = self._settings
        if self.offline_model is not None:
            return openai.OpenAI(
                api_key="offline-teaching-model",
                base_url=OFFLINE_BASE_URL,
                # The offline model's faults are scheduled on purpose; a retry would only wait.
                max_retries=0,
                timeout=settings.timeout_seconds,
                http_client=openai.DefaultHttpxClient(
                    transport=OfflineTransport(
                        self.offline_model, chars_per_second=settings.offline_stream_chars_per_second
                    )
                ),
            )
        return openai.OpenAI(
            api_key=settings.openai_api_key.get_secret_value(),
            base_url=settings.openai_base_url,
            max_retries=settings.max_retries,
            timeout=settings.timeout_seconds,
        )

    @property
    def _client(self) -> openai.OpenAI:
        # A notebook's clean-up cell closes the client; a cell run after it (a section re-run after
        # Run All) gets a new connection instead of httpx's «client has been closed».
        if self._closed:
            self._sdk_client, self._closed = self._new_sdk_client(), False
        return self._sdk_client

    def close(self) -> None:
        """Release the connections; the next request opens new ones."""
        self._sdk_client.close()
        self._closed = True

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _server_label(self) -> str:
        """Who answers, named honestly in warnings: the offline model is not api.openai.com."""
        if self.backend == "offline":
            return "Офлайн-модель (в роли OpenAI-совместимого сервера)"
        return f"Сервер {self._settings.openai_base_url or 'api.openai.com'}"

    def _complete_with_fallbacks(self, messages: Sequence[Message], options: _Options) -> LLMResult:
        """The call, retried once without what the server refused: the developer role, a schema."""
        role = self._instruction_role
        for _ in range(3):
            try:
                result = self._complete(messages, role, options)
            except openai.APIStatusError as error:
                if role == "developer" and _rejects_developer_role(error):
                    logger.warning(
                        "%s отклонил роль developer; повторяем с ролью system. "
                        "Чтобы не тратить лишний запрос, задайте LLM_INSTRUCTION_ROLE=system.",
                        self._server_label(),
                    )
                    role = "system"
                    continue
                if role != self._instruction_role and (_rejects_developer_role(error) or _mentions_role(error)):
                    raise LLMInstructionRoleError(
                        "Сервер не принимает ни роль developer, ни system для инструкции "
                        f"(HTTP {error.status_code}). Проверьте LLM_INSTRUCTION_ROLE в .env "
                        "и документацию сервера."
                    ) from error
                if options.response_format is not None and _rejects_response_format(error):
                    fallback = _json_object_form(options.response_format)
                    if fallback is not None:  # llama-cpp-python's form of a schema
                        logger.warning("%s не принимает json_schema; просим json_object со схемой.", self._server_label())
                        self._structured_output = "json_object"
                        options = options.with_response_format(fallback)
                        continue
                    logger.warning("%s не поддерживает response_format; просим JSON без схемы.", self._server_label())
                    self._structured_output = False
                    options = options.without_response_format()
                    continue
                raise
            self._instruction_role = role  # learned: no more rejected requests
            if options.response_format is not None and self._structured_output is None:
                self._structured_output = True
            return result
        raise LLMBadRequestError("Сервер отклонил запрос и после повторов без роли developer и без JSON-схемы.")

    def _learned_format(self, response_format: ResponseFormat | None) -> ResponseFormat | None:
        """The structured-output form this server took last time (asking again costs a request)."""
        if response_format is None or self._structured_output is False:
            return None if self._structured_output is False else response_format
        if self._structured_output == "json_object":
            return _json_object_form(response_format) or response_format
        return response_format

    def _complete(
        self,
        messages: Sequence[Message],
        instruction_role: str,
        options: _Options,
    ) -> LLMResult:
        payload = [_wire_message(m, instruction_role) for m in messages]
        # OpenAI's own API names the limit max_completion_tokens; most compatible servers
        # (the ones that also want the `system` role) know only max_tokens.
        limit_name = "max_completion_tokens" if instruction_role == "developer" else "max_tokens"
        extra: dict[str, Any] = {limit_name: options.max_output_tokens}
        if self._settings.temperature is not None:
            extra["temperature"] = self._settings.temperature
        if options.response_format is not None:
            extra["response_format"] = dict(options.response_format)
        if options.tools:
            extra["tools"] = list(options.tools)
            if options.tool_choice is not None:
                extra["tool_choice"] = options.tool_choice
        if options.on_delta is not None:
            return self._stream(options.model, payload, extra, options.on_delta)
        completion = self._client.chat.completions.create(
            model=options.model,
            messages=payload,  # type: ignore[arg-type]
            **extra,
        )
        return _completion_result(completion)

    def _stream(
        self, model_name: str, payload: list[dict[str, str]], options: dict[str, Any], on_delta: DeltaCallback
    ) -> LLMResult:
        started = perf_counter()
        first_token: float | None = None
        pieces: list[str] = []
        finish_reason: str | None = None
        usage = None
        chunks = 0
        calls = StreamedCalls()
        response_model, response_id = model_name, ""
        # Usage arrives in a last chunk with no choices, only when asked for (and not from every server).
        stream = self._client.chat.completions.create(
            model=model_name,
            messages=payload,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
            **options,
        )
        with stream:
            _check_stream_content_type(stream)
            for chunk in _interrupted_as_error(stream, pieces):
                chunks += 1
                if not hasattr(chunk, "choices"):
                    raise LLMResponseFormatError(
                        "Сервер прислал в потоке не фрагмент ответа модели. "
                        "Проверьте OPENAI_BASE_URL: он должен указывать на OpenAI-совместимый API (…/v1)."
                    )
                response_model, response_id = chunk.model or response_model, chunk.id or response_id
                if chunk.usage is not None:
                    usage = chunk.usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                text = choice.delta.content if choice.delta else None
                if choice.delta is not None:
                    calls.add(choice.delta.tool_calls)
                if text:
                    if first_token is None:
                        first_token = perf_counter() - started
                    pieces.append(text)
                    on_delta(text)
                if choice.finish_reason is not None:
                    finish_reason = choice.finish_reason
        if chunks == 0:
            raise LLMResponseFormatError(
                "Сервер ответил (HTTP 200), но в потоке не было ни одного фрагмента ответа. "
                "Проверьте OPENAI_BASE_URL: он должен указывать на OpenAI-совместимый API (…/v1)."
            )
        if finish_reason is None:
            size = self._context_size
            context = f" ({tokens(size)})" if size else ""
            raise LLMStreamInterruptedError(
                f"Сервер закончил поток после {len(pieces)} фрагментов текста, не сообщив причину завершения: "
                f"ответ не закончен. Соединение было, так что сеть ни при чём. Частая причина — запрос "
                f"не поместился в контекст модели на сервере{context}: уменьшите CHAT_INPUT_TOKEN_BUDGET "
                "или MAX_OUTPUT_TOKENS; подробности — в журнале сервера."
            )
        return LLMResult(
            text="".join(pieces),
            finish_reason=finish_reason,
            model=response_model,
            response_id=response_id,
            prompt_tokens=_usage_field(usage, "prompt_tokens"),
            completion_tokens=_usage_field(usage, "completion_tokens"),
            total_tokens=_usage_field(usage, "total_tokens"),
            cached_tokens=_cached_tokens(usage),
            streamed=True,
            first_token_seconds=first_token,
            tool_calls=calls.calls(),
        )

    def _ask_context_size(self) -> int | None:
        base = (self._settings.openai_base_url or "").rstrip("/")
        root = base[: -len("/v1")] if base.endswith("/v1") else base
        for url in (f"{root}/props", f"{base}/models"):
            try:
                response = self._client.with_options(max_retries=0, timeout=PROBE_TIMEOUT_SECONDS).get(
                    url, cast_to=httpx2.Response
                )
                size = context_size_from(response.json())
            except Exception as error:  # any failure only means "not reported here"
                logger.debug("Размер контекста не получен с %s: %s", url, error)
                continue
            if size:
                return size
        return None

    def _translate(self, error: openai.APIError) -> LLMClientError:
        translated = _translate(error, self._settings)
        if isinstance(translated, LLMContextOverflowError) and translated.context_size:
            with self._lock:
                self._context_size = translated.context_size
        return translated


@dataclass(frozen=True)
class _Options:
    model: str
    on_delta: DeltaCallback | None
    response_format: ResponseFormat | None
    max_output_tokens: int
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | Mapping[str, Any] | None = None

    def without_response_format(self) -> _Options:
        return self.with_response_format(None)

    def with_response_format(self, response_format: ResponseFormat | None) -> _Options:
        return dataclasses.replace(self, response_format=response_format)


def _wire_message(message: Message, instruction_role: str) -> dict[str, Any]:
    """One message as sent: the instruction role chosen for this server, tool fields kept."""
    role = message["role"]
    wire: dict[str, Any] = {"role": instruction_role if role in INSTRUCTION_ROLES else role,
                            "content": message["content"]}  # fmt: skip
    if "tool_calls" in message:
        wire["tool_calls"] = [dict(call, function=dict(call["function"])) for call in message["tool_calls"]]
    if "tool_call_id" in message:
        wire["tool_call_id"] = message["tool_call_id"]
    return wire


def _json_object_form(response_format: ResponseFormat) -> ResponseFormat | None:
    """{"type": "json_object", "schema": …}: how llama-cpp-python takes a schema (it refuses
    "json_schema"); None when `response_format` is not a json_schema request."""
    if response_format.get("type") != "json_schema":
        return None
    schema = (response_format.get("json_schema") or {}).get("schema")
    return {"type": "json_object", "schema": schema} if schema is not None else None


def _completion_result(completion: Any) -> LLMResult:
    """The result of a non-streamed call; anything that is not a chat completion is our error."""
    if not isinstance(completion, ChatCompletion):
        raise LLMResponseFormatError(
            "Сервер ответил (HTTP 200), но не ответом модели, а "
            f"{_describe_body(completion)}. Чаще всего это страница прокси или веб-интерфейса: "
            "проверьте OPENAI_BASE_URL — он должен указывать на OpenAI-совместимый API (обычно оканчивается на /v1)."
        )
    try:
        choice = completion.choices[0]
        text = choice.message.content
        finish_reason = choice.finish_reason
    except (AttributeError, IndexError, TypeError):
        raise LLMResponseFormatError(
            "Провайдер вернул ответ без вариантов (choices пуст или не того вида): это не ответ модели. "
            "Проверьте OPENAI_BASE_URL и OPENAI_MODEL."
        ) from None
    usage = completion.usage
    calls = calls_of_message(getattr(choice, "message", None))
    return LLMResult(
        text=text if isinstance(text, str) or text is None else str(text),
        finish_reason=finish_reason,
        model=completion.model if isinstance(completion.model, str) else "",
        response_id=completion.id if isinstance(completion.id, str) else "",
        prompt_tokens=_usage_field(usage, "prompt_tokens"),
        completion_tokens=_usage_field(usage, "completion_tokens"),
        total_tokens=_usage_field(usage, "total_tokens"),
        cached_tokens=_cached_tokens(usage),
        tool_calls=calls,
    )


def _describe_body(body: Any) -> str:
    if isinstance(body, str):
        shown = " ".join(body.split())[:80]
        kind = "HTML-страницей" if "<html" in body.lower() or "<!doctype" in body.lower() else "текстом"
        return f"{kind} («{shown}…»)" if shown else "пустым телом"
    return f"объектом {type(body).__name__}"


def _check_stream_content_type(stream: Any) -> None:
    response = getattr(stream, "response", None)
    content_type = response.headers.get("content-type", "") if response is not None else ""
    if "html" in content_type.lower():
        raise LLMResponseFormatError(
            "Сервер ответил (HTTP 200) HTML-страницей вместо потока ответа модели. Чаще всего это страница "
            "прокси или веб-интерфейса: проверьте OPENAI_BASE_URL — он должен указывать на OpenAI-совместимый "
            "API (обычно оканчивается на /v1)."
        )


def _usage_field(usage: Any, name: str) -> int | None:
    value = getattr(usage, name, None) if usage is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def context_size_from(data: Any) -> int | None:
    """The context window a server reports: llama.cpp `/props` or `/v1/models` (runtime `n_ctx`
    first; `n_ctx_train`, the model's training context, only when nothing else is said)."""
    if not isinstance(data, dict):
        return None
    candidates: list[Any] = [
        data.get("n_ctx"),
        (data.get("default_generation_settings") or {}).get("n_ctx")
        if isinstance(data.get("default_generation_settings"), dict) else None,
    ]
    models = data.get("data")
    if isinstance(models, list) and models and isinstance(models[0], dict):
        meta = models[0].get("meta") if isinstance(models[0].get("meta"), dict) else {}
        candidates += [meta.get("n_ctx"), models[0].get("context_length"), meta.get("n_ctx_train")]
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _interrupted_as_error(stream: Any, pieces: list[str]) -> Any:
    """The stream's chunks; a connection lost mid-reply is said as such, not as "cannot connect"."""
    try:
        yield from stream
    except (openai.APIConnectionError, openai.APITimeoutError) as error:
        raise LLMStreamInterruptedError(
            f"Поток ответа оборвался после {len(pieces)} фрагментов текста; ответ не закончен. "
            "Соединение с сервером было установлено: вероятнее всего, сервер прервал генерацию "
            "(упал, перезапустился или закрыл соединение) — загляните в его журнал и повторите."
        ) from error


def _cached_tokens(usage: Any) -> int | None:
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return cached if isinstance(cached, int) else None


def generate_with_model(
    client: Any, messages: Sequence[Message], model: str | None, *, response_format: ResponseFormat | None = None
) -> LLMResult:
    """`client.generate(messages)`, naming `model` (and `response_format`) only when one is set.

    A helper service (summaries, memory) may use its own, cheaper model; test doubles and metered
    clients whose `generate` takes only the messages still work when it does not.
    """
    options: dict[str, Any] = {}
    if model is not None:
        options["model"] = model
    if response_format is not None and _accepts(client, "response_format"):
        options["response_format"] = response_format
    return client.generate(messages, **options)


def _accepts(client: Any, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(client.generate).parameters
    except (TypeError, ValueError):
        return False


def _validate_messages(messages: Sequence[Message]) -> None:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise LLMBadRequestError("Список сообщений для модели пуст или не является списком.")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise LLMBadRequestError(f"Сообщение №{index} должно быть словарём с role и content.")
        role, content = message.get("role"), message.get("content")
        if role not in VALID_ROLES and role != TOOL_ROLE:
            raise LLMBadRequestError(f"Сообщение №{index}: неизвестная роль {role!r}.")
        if not isinstance(content, str):
            raise LLMBadRequestError(f"Сообщение №{index}: content должен быть строкой.")
        problem = check_wire_message(index, message)
        if problem is not None:
            raise LLMBadRequestError(problem)


def _error_text(error: openai.APIStatusError) -> str:
    body: Any = error.body
    return f"{error.message} {body}".lower()


def _rejects_developer_role(error: openai.APIStatusError) -> bool:
    # llama.cpp-style servers answer 400/422/500 with a validation error that names the role.
    return error.status_code in {400, 422, 500} and "developer" in _error_text(error)


def _mentions_role(error: openai.APIStatusError) -> bool:
    text = _error_text(error)  # "role 'tool' must be …" is about a broken exchange, not the instruction
    return error.status_code in {400, 422, 500} and "role" in text and not _TOOL_SEQUENCE.search(text)


def _rejects_response_format(error: openai.APIStatusError) -> bool:
    text = _error_text(error)
    return error.status_code in {400, 422, 500, 501} and ("response_format" in text or "json_schema" in text)


_CONTEXT_SIZE = re.compile(
    r"(?:context window of|maximum context length is|context size(?: of)?|n_ctx(?:_slot)?\s*[=:]?)\s*\(?(\d+)"
)
_TOOL_SEQUENCE = re.compile(
    r"role 'tool' must be a response to a preceeding message with 'tool_calls'"
    r"|role 'tool' must be a response to a preceding message with 'tool_calls'"
    r"|'tool_calls' must be followed by tool messages"
)
_OVERFLOW = re.compile(
    r"context_length_exceeded|exceed(?:s|ed)? (?:the )?(?:context|available context)|maximum context length"
    r"|context window|context size|too many tokens|n_ctx"
)


def _server_detail(error: openai.APIStatusError) -> str:
    """The server's own words about the failure, short and on one line."""
    body: Any = error.body
    detail: Any = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        detail = inner.get("message") or inner.get("detail") if isinstance(inner, dict) else inner
        detail = detail or body.get("detail")
    text = detail if isinstance(detail, str) else str(detail if detail is not None else error.message)
    text = " ".join(text.split())
    return text[:DETAIL_CHARS] + ("…" if len(text) > DETAIL_CHARS else "")


def _translate(error: openai.APIError, settings: Settings | None = None) -> LLMClientError:
    """Map the SDK's exception to ours: what failed, the likely cause, the next step — in Russian."""
    timeout = settings.timeout_seconds if settings is not None else None
    if isinstance(error, openai.APITimeoutError):
        waited = f" за {timeout:g} с" if timeout is not None else " вовремя"
        return LLMTimeoutError(
            f"Модель не ответила{waited} (таймаут OPENAI_TIMEOUT_SECONDS). Повторите запрос; если модель "
            "медленная (локальный сервер на процессоре), увеличьте OPENAI_TIMEOUT_SECONDS в .env."
        )
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        if cause is not None and not isinstance(cause, (httpx2.ConnectError, httpx2.ConnectTimeout)):
            return LLMConnectionError(
                "Сервер модели принял соединение, но оборвал его, не прислав ответа. Сеть в порядке: "
                "вероятнее всего, сервер упал или перезапускается — загляните в его журнал и повторите."
            )
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
        detail = _server_detail(error)
        lowered = f"{detail} {_error_text(error)}".lower()
        if error.status_code in {400, 413, 422, 500} and _OVERFLOW.search(lowered):
            size_match = _CONTEXT_SIZE.search(lowered)
            size = int(size_match.group(1)) if size_match else None
            budget = settings.chat_input_token_budget if settings is not None else None
            return LLMContextOverflowError(
                "Запрос не поместился в контекст модели на сервере"
                + (f" ({tokens(size)})" if size else "")
                + f" (HTTP {error.status_code}). Уменьшите CHAT_INPUT_TOKEN_BUDGET"
                + (f" (сейчас {budget})" if budget else "")
                + " или MAX_OUTPUT_TOKENS, либо запустите сервер с большим контекстом. "
                f"Сервер: {detail}",
                size,
            )
        if error.status_code == 400 and _TOOL_SEQUENCE.search(lowered):
            return LLMToolSequenceError(
                "Сервер отклонил историю (HTTP 400): обмен с инструментом разорван — сообщение tool "
                "без сообщения ассистента с tool_calls, на которое оно отвечает, или вызов без "
                "результата. Так бывает, когда окно или обрезка истории режут внутри обмена: "
                "отбрасывайте вызов и его результаты только вместе. Сервер: " + detail
            )
        if error.status_code == 404:
            if re.search(r"model[^/]*(?:not (?:be )?found|does not exist)|model_not_found", lowered):
                return LLMBadRequestError(
                    f"Сервер не знает модель (HTTP 404): проверьте OPENAI_MODEL. Сервер: {detail}"
                )
            return LLMBadRequestError(
                "Адрес не найден (HTTP 404). Проверьте OPENAI_BASE_URL: у OpenAI-совместимых серверов он "
                "обычно оканчивается на /v1 (например, http://127.0.0.1:8080/v1)"
                + (f"; сейчас: {settings.openai_base_url}" if settings is not None and settings.openai_base_url else "")
                + f". Сервер: {detail}"
            )
        if error.status_code >= 500:
            return LLMServerError(
                f"Ошибка на стороне провайдера (HTTP {error.status_code}): {detail.rstrip('.')}. "
                "Повторите позже; если сервер ваш — загляните в его журнал."
            )
        return LLMBadRequestError(
            f"Провайдер отклонил запрос (HTTP {error.status_code}): {detail}"
        )
    message = getattr(error, "message", None) or str(error)
    return LLMServerError(f"Некорректный ответ провайдера: {message}")
