"""`OfflineModel`: a deterministic stand-in for an OpenAI-compatible chat-completions endpoint.

It takes the JSON body of a `POST /v1/chat/completions` request and returns a status code and a JSON
body exactly shaped like a provider's: `chat.completion` with `usage`, or an `{"error": …}` object.
It knows only what is in the request (see `dialogue`, `replies`, `summary`), counts tokens with the
course's `TokenCounter`, honours `max_completion_tokens` / `max_tokens`, keeps the last requests for
lessons to inspect, and produces scheduled faults. No network, no randomness, no clock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from course_lib.llm.offline.dialogue import (
    tag_block,
    is_summary_request,
    read_chat_request,
    read_summary_request,
)
from course_lib.llm.offline.ledger import (
    CustomerRecord,
    Ledger,
    answer_memory_question,
    read_ledger,
    read_memory_question,
    summary_mentions,
    transcript_mentions,
)
from course_lib.llm.offline.faults import (
    FAULT_KINDS,
    FaultQueue,
    SimulatedConnectionError,
    SimulatedTimeout,
)
from course_lib.llm.offline.memory import compose_extraction, is_extraction_request, read_memory_blocks
from course_lib.llm.offline.replies import compose_chat_reply
from course_lib.llm.offline.summary import compose_summary, length_cap
from course_lib.llm.offline import tools as tool_rules
from course_lib.llm.tool_calls import check_tools, check_wire_message
from course_lib.tokenizer import TokenCounter, get_encoding

DEFAULT_MODEL_NAME = "offline-teaching-model"
CREATED = 1_700_000_000
"""The fixed `created` timestamp of every completion (no wall clock)."""
REQUEST_LOG_SIZE = 100
TRUNCATED_FAULT_TOKENS = 5
KNOWN_ROLES = frozenset({"developer", "system", "user", "assistant", "tool"})
INSTRUCTION_ROLES = frozenset({"developer", "system"})


@dataclass(frozen=True)
class OfflineResponse:
    """What the endpoint answers: an HTTP status code and a JSON body."""

    status_code: int
    body: dict[str, Any]


@dataclass(frozen=True)
class OfflineStream:
    """A streamed answer: the `chat.completion.chunk` objects in order, as server-sent events.

    `cut_after` (a `stream_cut` fault) drops the connection after that many chunks.
    """

    chunks: tuple[dict[str, Any], ...]
    cut_after: int | None = None


class _RequestError(Exception):
    def __init__(self, response: OfflineResponse) -> None:
        super().__init__(response.body)
        self.response = response


class OfflineModel:
    """The offline teaching model. Thread-safe; one instance can serve a whole course session."""

    def __init__(
        self,
        *,
        model_name: str = DEFAULT_MODEL_NAME,
        encoding_name: str = "o200k_base",
        accepted_instruction_roles: frozenset[str] = frozenset({"developer", "system"}),
        usage_scale: float = 1.0,
        prompt_cache: bool = True,
        tool_pairing: bool = True,
    ) -> None:
        """`usage_scale` simulates a provider whose tokenizer counts differently (2.6 for a small
        local model on Russian text): its `usage` is the course's count times this factor.
        `prompt_cache` reports `cached_tokens` by OpenAI's rule (see `PromptCache`).
        `tool_pairing=False` accepts a cut tool exchange, as llama-cpp-python does (OpenAI answers 400)."""
        if not usage_scale > 0:
            raise ValueError("usage_scale должен быть больше нуля.")
        self.usage_scale = usage_scale
        self.tool_pairing = tool_pairing
        self.model_name = model_name
        self.encoding_name = encoding_name
        self.accepted_instruction_roles = frozenset(accepted_instruction_roles)
        self._counter = TokenCounter(encoding_name)
        self._encoding = get_encoding(encoding_name)
        self._faults = FaultQueue()
        self._cache = PromptCache() if prompt_cache else None
        # The same history comes back every turn: build each message's block once, and the
        # cache compares blocks it has seen before by identity.
        self._block = functools.lru_cache(maxsize=8192)(self._block_uncached)
        self._requests: deque[dict[str, Any]] = deque(maxlen=REQUEST_LOG_SIZE)
        self._calls = 0
        self._lock = threading.Lock()

    # --- faults -----------------------------------------------------------------------------

    def schedule_fault(self, kind: str, times: int = 1, *, after: int = 0, chunks: int = 3) -> None:
        """Make the next `times` requests (after `after` clean ones) fail with `kind`.

        Kinds: see `FAULT_KINDS`; `chunks` is where a `stream_cut` drops the stream. Faults queue
        up in the order scheduled.
        """
        self._faults.schedule(kind, times, after, chunks)

    def clear_faults(self) -> None:
        self._faults.clear()

    @property
    def pending_faults(self) -> tuple[str, ...]:
        return self._faults.pending()

    # --- what the model received -------------------------------------------------------------

    @property
    def requests(self) -> tuple[dict[str, Any], ...]:
        """The parsed bodies of the last 100 requests, most recent last (faulted ones included)."""
        with self._lock:
            return tuple(self._requests)

    @property
    def last_request(self) -> dict[str, Any] | None:
        with self._lock:
            return self._requests[-1] if self._requests else None

    @property
    def calls(self) -> int:
        """How many chat-completion requests arrived, including failed and faulted ones."""
        with self._lock:
            return self._calls

    # --- the endpoint ------------------------------------------------------------------------

    def complete(self, raw_body: bytes) -> OfflineResponse | OfflineStream:
        """Handle one `POST /v1/chat/completions` body.

        Raises `SimulatedTimeout` / `SimulatedConnectionError` for the network faults; a request
        with `"stream": true` gets an `OfflineStream`; everything else, errors included, is an
        `OfflineResponse`.
        """
        try:
            payload: Any = json.loads(raw_body or b"null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            payload = None
        with self._lock:
            self._calls += 1
            if isinstance(payload, dict):
                self._requests.append(payload)
        scheduled = self._faults.take()
        fault = scheduled.kind if scheduled else None
        streaming = isinstance(payload, dict) and payload.get("stream") is True

        if fault == "stream_cut" and not streaming:
            fault = "connection"  # a body cut short is a broken connection for a plain request
        if fault == "timeout":
            raise SimulatedTimeout("Офлайн-модель не ответила вовремя (учебный сбой timeout).")
        if fault == "connection":
            raise SimulatedConnectionError("Не удалось подключиться к офлайн-модели (учебный сбой connection).")
        if fault == "rate_limit":
            return _error(
                429,
                "Превышен лимит запросов к офлайн-модели (учебный сбой rate_limit).",
                "requests",
                code="rate_limit_exceeded",
            )
        if fault == "server_error":
            return _error(500, "Внутренняя ошибка офлайн-модели (учебный сбой server_error).", "server_error")

        try:
            messages, limit = self._validate(payload)
        except _RequestError as error:
            return error.response
        response = self._completion(payload, messages, limit, fault)
        if not streaming:
            return response
        cut_after = scheduled.chunks if fault == "stream_cut" else None
        return OfflineStream(stream_chunks(response.body, _include_usage(payload)), cut_after)

    def reply_text(self, messages: Sequence[Mapping[str, str]]) -> str:
        """What the model would answer to these messages, without HTTP, limits or bookkeeping."""
        if is_extraction_request(messages):
            return compose_extraction(messages)
        if is_summary_request(messages):
            user_contents = [m.get("content") or "" for m in messages if m.get("role") == "user"]
            previous, fragment = read_summary_request(user_contents[-1])
            instruction = "\n".join(
                m.get("content") or "" for m in messages if m.get("role") in INSTRUCTION_ROLES
            )
            return compose_summary(previous.merge(fragment), length_cap(instruction), _summary_record(user_contents[-1]))
        question = read_memory_question(_customer_text(messages))
        if question is not None:  # the customer's record across the request: see `ledger`
            return answer_memory_question(question, read_ledger(messages))
        return compose_chat_reply(read_chat_request(read_memory_blocks(messages)))

    # --- internals ---------------------------------------------------------------------------

    def _validate(self, payload: Any) -> tuple[list[dict[str, str]], int | None]:
        if not isinstance(payload, dict):
            raise _RequestError(_error(400, "Тело запроса должно быть JSON-объектом.", "invalid_request_error"))
        if not isinstance(payload.get("model"), str) or not payload["model"]:
            raise _RequestError(_error(400, "Не указана модель (model).", "invalid_request_error", param="model"))
        if payload.get("stream") not in (None, True, False):
            raise _RequestError(
                _error(400, "stream должен быть true или false.", "invalid_request_error", param="stream")
            )
        raw_messages = payload.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            raise _RequestError(
                _error(400, "messages должен быть непустым списком.", "invalid_request_error", param="messages")
            )
        messages = [self._message(index, m) for index, m in enumerate(raw_messages)]
        if payload.get("tools") is not None:
            try:
                check_tools(payload["tools"])
            except ValueError as error:
                raise _RequestError(_error(400, str(error), "invalid_request_error", param="tools")) from None
        elif payload.get("tool_choice") is not None:
            raise _RequestError(_error(
                400, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                "invalid_request_error", param="tool_choice",
            ))  # fmt: skip
        broken = tool_rules.pairing_error(messages) if self.tool_pairing else None
        if broken is not None:
            index, message = broken
            raise _RequestError(_error(400, message, "invalid_request_error", param=f"messages.[{index}].role"))
        return messages, _token_limit(payload)

    def _message(self, index: int, message: Any) -> dict[str, Any]:
        param = f"messages[{index}]"
        if not isinstance(message, dict):
            raise _RequestError(_error(400, f"{param} должно быть объектом.", "invalid_request_error", param=param))
        role = message.get("role")
        if role not in KNOWN_ROLES:
            raise _RequestError(
                _error(
                    400,
                    f"{param}.role: неизвестная роль {role!r}. Допустимы: developer, system, user, assistant, tool.",
                    "invalid_request_error",
                    param=f"{param}.role",
                )
            )
        if role in INSTRUCTION_ROLES and role not in self.accepted_instruction_roles:
            raise _RequestError(self._role_rejection(index, role))
        content = _text_content(message.get("content"))
        if content is None and role == "assistant" and message.get("tool_calls"):
            content = ""  # a message that only calls tools may have null content
        problem = check_wire_message(index, message)
        if problem is not None:
            raise _RequestError(_error(400, problem, "invalid_request_error", param=param))
        if content is None:
            raise _RequestError(
                _error(
                    400, f"{param}.content должен быть строкой.", "invalid_request_error",
                    param=f"{param}.content",
                )
            )
        kept: dict[str, Any] = {"role": role, "content": content}
        for name in ("tool_calls", "tool_call_id"):
            if name in message:
                kept[name] = message[name]
        return kept

    def _role_rejection(self, index: int, role: str) -> OfflineResponse:
        """The validation error a llama-cpp-python server returns for a role it does not know."""
        allowed = sorted(self.accepted_instruction_roles) + ["user", "assistant"]
        details = [
            {
                "type": "literal_error",
                "loc": ("body", "messages", index, "typed-dict", "role"),
                "msg": f"Input should be {expected!r}",
                "input": role,
                "ctx": {"expected": repr(expected)},
            }
            for expected in allowed
        ]
        return _error(500, str(details), "internal_server_error")

    def _completion(
        self,
        payload: dict[str, Any],
        messages: list[dict[str, str]],
        limit: int | None,
        fault: str | None,
    ) -> OfflineResponse:
        calls = tool_rules.decide_calls(messages, tool_rules.offered_names(payload.get("tools")), payload.get("tool_choice"))
        if fault is None and calls:
            return self._tool_call_completion(payload, messages, calls)
        if tool_rules.ends_with_results(messages):
            said, plain = tool_rules.answer_from_results(messages)
            text = " ".join(part for part in (said, self.reply_text(plain) if plain else "") if part)
        else:  # earlier exchanges are context the text reply does not read
            plain = [m for m in messages if m["role"] != "tool" and not m.get("tool_calls")]
            text = tool_rules.contact_answer(messages) or self.reply_text(
                tool_rules.with_core_memory(plain, tool_rules.core_memory_text(messages))
            )
        tokens = self._encoding.encode(text, disallowed_special=())
        finish_reason = "stop"
        if fault == "empty":
            tokens = []
        elif fault == "truncated":
            tokens, finish_reason = tokens[:TRUNCATED_FAULT_TOKENS], "length"
        if limit is not None and len(tokens) > limit:
            tokens, finish_reason = tokens[:limit], "length"
        text = self._encoding.decode_bytes(tokens).decode("utf-8", errors="ignore")
        message = {"role": "assistant", "content": text, "refusal": None}
        return self._body(payload, messages, message, finish_reason, len(tokens))

    def _tool_call_completion(
        self, payload: dict[str, Any], messages: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]
    ) -> OfflineResponse:
        """An answer that only calls tools: ids derived from the request, arguments as JSON text."""
        base = completion_id(payload).removeprefix("chatcmpl-offline-")
        wire = [
            {"id": f"call_{base[:16]}{number:02d}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
            for number, (name, arguments) in enumerate(calls)
        ]  # fmt: skip
        message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": wire}
        spent = sum(len(self._encoding.encode(call["function"]["name"] + call["function"]["arguments"])) for call in wire)
        return self._body(payload, messages, message, "tool_calls", spent)

    def _body(
        self, payload: dict[str, Any], messages: list[dict[str, Any]], message: dict[str, Any],
        finish_reason: str, completion_tokens: int,
    ) -> OfflineResponse:  # fmt: skip
        prompt_tokens = self._counter.count_messages(messages)  # tool calls and ids count too
        cached_tokens = self._cache.lookup_and_remember(self._prompt_blocks(messages)) if self._cache else 0
        if self.usage_scale != 1.0:  # another tokenizer: the provider's own count, not ours
            prompt_tokens = math.ceil(prompt_tokens * self.usage_scale)
            cached_tokens = min(prompt_tokens, math.floor(cached_tokens * self.usage_scale))
        return OfflineResponse(
            200,
            {
                "id": completion_id(payload),
                "object": "chat.completion",
                "created": CREATED,
                "model": self.model_name,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                    "prompt_tokens_details": {"cached_tokens": cached_tokens},
                },
                "system_fingerprint": "offline",
            },
        )


    def _prompt_blocks(self, messages: list[dict[str, str]]) -> list[tuple[int, ...]]:
        """The request as the provider's cache sees it: one token block per message, in order.

        Each block is the message's 3 format tokens (stand-ins) + role + content, so the blocks'
        total length equals `TokenCounter.count_messages` without the reply primer.
        """
        return [self._block(m["role"], m["content"]) for m in _counted(messages)]

    def _block_uncached(self, role: str, content: str) -> tuple[int, ...]:
        return (-1, -1, -1, *self._encoding.encode(role), *self._encoding.encode(content, disallowed_special=()))


def _customer_text(messages: Sequence[Mapping[str, str]]) -> str:
    """The last message's text when it is the customer's, inside its `<customer_message>` tags."""
    if not messages or messages[-1].get("role") != "user":
        return ""
    content = messages[-1].get("content") or ""
    match = re.search(r"<customer_message>(.*?)</customer_message>", content, re.DOTALL)
    return match.group(1) if match else content


def _summary_record(content: str) -> CustomerRecord:
    """Earlier orders and contacts from `<previous_summary>` and the fragment's customer lines."""
    previous = tag_block(content, "previous_summary") or ""
    fragment = tag_block(content, "conversation_fragment") or ""
    return CustomerRecord.of(Ledger((*summary_mentions(previous), *transcript_mentions(fragment))))


class PromptCache:
    """OpenAI's prompt-caching rule, simulated: exact prefix match with a recent request.

    Hits start at 1,024 tokens and grow in steps of 128; a hit is reported in
    `usage.prompt_tokens_details.cached_tokens` and billed at the cached-input price. Prefixes are
    compared message by message (tuple equality, fast), then token by token inside the first
    message that differs.
    """

    MIN_TOKENS = 1024
    STEP = 128

    def __init__(self, size: int = 16) -> None:
        self._recent: deque[list[tuple[int, ...]]] = deque(maxlen=size)
        self._lock = threading.Lock()

    def lookup_and_remember(self, blocks: list[tuple[int, ...]]) -> int:
        with self._lock:
            longest = max((_common_prefix(blocks, seen) for seen in self._recent), default=0)
            self._recent.append(blocks)
        if longest < self.MIN_TOKENS:
            return 0
        return longest // self.STEP * self.STEP


def _common_prefix(blocks: list[tuple[int, ...]], seen: list[tuple[int, ...]]) -> int:
    length = 0
    for ours, theirs in zip(blocks, seen):
        if ours is theirs or ours == theirs:
            length += len(ours)
            continue
        for a, b in zip(ours, theirs):
            if a != b:
                break
            length += 1
        break
    return length


def stream_chunks(body: dict[str, Any], include_usage: bool) -> tuple[dict[str, Any], ...]:
    """A completion body as the chunks a provider streams: role, one chunk per word, the finish.

    Joined, the chunks' contents equal the non-streamed reply exactly.
    """
    choice = body["choices"][0]
    text = choice["message"]["content"] or ""
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"],
            "model": body["model"], "system_fingerprint": body.get("system_fingerprint")}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

    pieces = re.findall(r"\S+\s*|\s+", text)
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in pieces]
    for index, call in enumerate(choice["message"].get("tool_calls") or ()):
        # As providers stream a call: id and name first, then the arguments' text in pieces.
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}  # fmt: skip
        chunks.append(chunk({"tool_calls": [head]}))
        arguments = call["function"]["arguments"]
        for start in range(0, len(arguments), 16):
            part = {"index": index, "function": {"arguments": arguments[start : start + 16]}}
            chunks.append(chunk({"tool_calls": [part]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": body["usage"]})
    return tuple(chunks)


def _counted(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Messages as tokens are counted: a call's name and arguments count like content."""
    counted = []
    for message in messages:
        content = message["content"]
        for call in message.get("tool_calls") or ():
            content += call["function"]["name"] + call["function"]["arguments"]
        if message.get("tool_call_id"):
            content = message["tool_call_id"] + content
        counted.append({"role": message["role"], "content": content})
    return counted


def _include_usage(payload: Mapping[str, Any]) -> bool:
    options = payload.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def completion_id(payload: Mapping[str, Any]) -> str:
    """Deterministic: the same request body always gets the same id."""
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "chatcmpl-offline-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


def _token_limit(payload: Mapping[str, Any]) -> int | None:
    for name in ("max_completion_tokens", "max_tokens"):
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _RequestError(
                _error(400, f"{name} должно быть целым числом не меньше 1.", "invalid_request_error", param=name)
            )
        return value
    return None


def _text_content(content: Any) -> str | None:
    """String content as is; a list of text parts joined; anything else is invalid."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content
    ):
        return "".join(part["text"] for part in content)
    return None


def _error(
    status_code: int, message: str, error_type: str, *, param: str | None = None, code: str | None = None
) -> OfflineResponse:
    return OfflineResponse(
        status_code, {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    )


__all__ = [
    "CREATED", "FAULT_KINDS", "OfflineModel", "OfflineResponse", "OfflineStream", "PromptCache", "completion_id",
]
