"""`LlamaCppStandIn`: a small OpenAI-compatible HTTP server with llama.cpp's quirks, for CI.

Building llama.cpp takes half an hour; this server answers in milliseconds and behaves the way the
course found llama-cpp-python 0.3.x to behave with small local models:

- its own token counts (another tokenizer: two tokens per three characters of Russian text,
  plus a chat-template overhead per message; 2–3 times the estimate, like SmolLM2), in `usage` of plain calls only — a stream carries
  no usage, even with `stream_options.include_usage`;
- the `developer` role is refused with HTTP 500 and a pydantic validation detail;
- a context window (`n_ctx`, reported by `/props` like llama.cpp's server): a plain request over it
  gets HTTP 400 `context_length_exceeded`, a streamed one ends without a finish reason;
- scheduled faults: an HTML page with HTTP 200 (`html`), HTTP 500 with a detail (`server_error`),
  a connection closed before the first byte (`drop`), a 404 (`not_found`), a late answer (`slow`);
- memory extraction answers that invent facts: a phone and an e-mail nobody gave, a new order
  number and name for a question, a command stored as a `problem`;
- optionally (`rambling=True`) SmolLM2-135M's habit: it never stops by itself, every answer runs to
  `max_tokens` and ends with `finish_reason="length"`;
- tools as llama-cpp-python 0.3.36's default chat format handles them (measured with
  Qwen2.5-Coder-0.5B): the tools go into the prompt, but a call comes back as the model's *text*
  (`{"name": …, "arguments": "…"}` per line, `finish_reason="stop"`); only a `tool_choice` that names
  a function returns `tool_calls` (id `call__0_<name>_<completion id>`, with the legacy
  `function_call` beside it, and in a stream every delta repeats the id and the name);
  `tool_choice="required"` is ignored; a cut exchange (a `tool` message without its call, a call
  without its result) is accepted, no 400; an assistant message with `"content": null` is a 500
  validation error (the content must be a string).

Replies are written by the course's offline model (it reads the request like a model would), so
a dialogue makes sense. Standard library only; binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from course_lib.llm.offline.dialogue import tag_block
from course_lib.llm.offline.model import OfflineModel, OfflineResponse, OfflineStream, stream_chunks

STANDIN_FAULTS = frozenset({"html", "server_error", "drop", "not_found", "slow"})
SLOW_SECONDS = 2.0
"""How long a `slow` fault keeps the client waiting (longer than the tests' timeout)."""
HTML_PAGE = (
    "<!DOCTYPE html><html><head><title>Proxy login</title></head>"
    "<body><h1>Please sign in to continue</h1></body></html>"
)
INVENTED_PHONE = "+7 999 123-45-67"
INVENTED_EMAIL = "client@example.com"


def standin_token_count(messages: Sequence[Mapping[str, Any]]) -> int:
    """The stand-in's tokenizer: a ChatML-like template (5 tokens per message, 3 to prime the
    reply) and two tokens per three characters of content."""
    return 3 + sum(5 + math.ceil(len(str(m.get("content") or "")) / 1.5) for m in messages)


class LlamaCppStandIn:
    """Start with `with LlamaCppStandIn() as server:`; point `OPENAI_BASE_URL` at `server.base_url`."""

    def __init__(
        self,
        *,
        n_ctx: int = 2048,
        model_name: str = "standin-qwen",
        report_props: bool = True,
        invent_facts: bool = True,
        json_schema: bool = True,
        json_object_only: bool = False,
        rambling: bool = False,
    ) -> None:
        self.n_ctx = n_ctx
        self.model_name = model_name
        self.report_props = report_props
        self.invent_facts = invent_facts
        self.json_schema = json_schema
        # llama-cpp-python 0.3.36: response_format "json_schema" is a 500 («Input should be 'text' or
        # 'json_object'»); {"type": "json_object", "schema": …} is accepted and constrains the answer.
        self.json_object_only = json_object_only
        self.rambling = rambling
        self.brain = OfflineModel(model_name=model_name, accepted_instruction_roles=frozenset({"system"}),
                                  prompt_cache=False, tool_pairing=False)
        self.requests: deque[dict[str, Any]] = deque(maxlen=200)
        """Parsed bodies of chat requests, most recent last."""
        self.counted: deque[tuple[dict[str, Any], int]] = deque(maxlen=500)
        """(request body, the stand-in's token count of its messages) for every request it counted."""
        self._faults: deque[str | None] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life cycle --------------------------------------------------------------------------

    def start(self) -> LlamaCppStandIn:
        standin = self

        class Handler(_Handler):
            server_state = standin

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="standin", daemon=True)  # shutdown() waits one poll
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LlamaCppStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "сервер не запущен"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def streamed_counts(self) -> list[int]:
        """The stand-in's token counts of the streamed chat requests, in order (the replies)."""
        with self._lock:
            return [count for payload, count in self.counted if payload.get("stream") is True]

    def schedule(self, fault: str, times: int = 1, *, after: int = 0) -> None:
        """The next `times` chat requests, after `after` clean ones, get `fault`."""
        if fault not in STANDIN_FAULTS:
            raise ValueError(f"Неизвестный сбой {fault!r}; допустимы: {sorted(STANDIN_FAULTS)}.")
        with self._lock:
            self._faults.extend([None] * after + [fault] * times)

    def take_fault(self) -> str | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    # --- the endpoint ------------------------------------------------------------------------

    def chat(self, body: bytes) -> tuple[int, dict[str, Any] | tuple[dict[str, Any], ...]]:
        """(status, JSON body) or (200, stream chunks)."""
        try:
            payload = json.loads(body or b"null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            return 400, {"error": {"message": "Invalid JSON body", "type": "invalid_request_error"}}
        if isinstance(payload, dict):
            with self._lock:
                self.requests.append(payload)
        if isinstance(payload, dict) and payload.get("response_format") is not None and not self.json_schema:
            return 400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}
        kind = payload.get("response_format", {}).get("type") if isinstance(payload, dict) else None
        if self.json_object_only and kind not in (None, "text", "json_object"):
            return 500, {"error": {"message": "1 validation error: ('body', 'response_format', 'type'): "
                                              "Input should be 'text' or 'json_object'", "type": "internal_server_error"}}
        null_content = _assistant_with_null_content(payload)
        if null_content is not None:
            return 500, {"error": {"message": f"7 validation errors:\n  {{'type': 'string_type', 'loc': ('body', "
                                              f"'messages', {null_content}, 'ChatCompletionRequestAssistantMessage', "
                                              "'content'), 'msg': 'Input should be a valid string', 'input': None}",
                                   "type": "internal_server_error"}}  # fmt: skip
        forced = _forced_function(payload)
        if isinstance(payload, dict):  # the brain writes the whole reply; streaming is ours
            plain = {k: v for k, v in payload.items() if k not in ("stream", "stream_options")}
            if plain.get("tool_choice") == "required":
                plain["tool_choice"] = "auto"  # not supported: the model chooses as with "auto"
            body = json.dumps(plain, ensure_ascii=False).encode("utf-8")
        result = self.brain.complete(body)
        assert not isinstance(result, OfflineStream)
        if result.status_code != 200:
            return result.status_code, result.body
        messages = payload["messages"]
        prompt_tokens = standin_token_count(messages)
        limit = payload.get("max_tokens") or payload.get("max_completion_tokens") or 0
        with self._lock:
            self.counted.append((payload, prompt_tokens))
        streaming = payload.get("stream") is True
        if prompt_tokens + int(limit) > self.n_ctx and not streaming:
            return 400, {"error": {
                "message": f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                f"{prompt_tokens + int(limit)} tokens ({prompt_tokens} in the messages, {limit} in the completion). "
                "Please reduce the length of the messages or completion.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
        completion = dict(result.body)
        completion = _as_llama_calls(completion, forced)
        if self.invent_facts and tag_block(_last_user(messages), "memory_source") is not None:
            completion = _with_message(completion, invent(completion["choices"][0]["message"]["content"],
                                                          tag_block(_last_user(messages), "memory_source") or ""))
        if self.rambling and limit:
            completion = ramble(completion, int(limit))
        completion_tokens = math.ceil(len(completion["choices"][0]["message"]["content"] or "") / 2)
        completion["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                               "total_tokens": prompt_tokens + completion_tokens}
        if not streaming:
            return 200, completion
        chunks = [c for c in stream_chunks(completion, include_usage=False)]
        if forced is not None:
            chunks = _repeating_names(chunks)
        if prompt_tokens + int(limit) > self.n_ctx:
            # What the course saw: the stream just ends, with no finish reason and no error event.
            chunks = chunks[:1]
        return 200, tuple(chunks)


def _assistant_with_null_content(payload: Any) -> int | None:
    """The index of an assistant message whose content is null (llama-cpp-python's pydantic refuses it)."""
    messages = payload.get("messages") if isinstance(payload, dict) else None
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content", "") is None:
            return index
    return None


def _forced_function(payload: Any) -> str | None:
    choice = payload.get("tool_choice") if isinstance(payload, dict) else None
    function = choice.get("function") if isinstance(choice, dict) else None
    return function.get("name") if isinstance(function, dict) else None


def _as_llama_calls(completion: dict[str, Any], forced: str | None) -> dict[str, Any]:
    """The brain's tool calls as llama-cpp-python returns them: text, unless a function was forced."""
    message = completion["choices"][0]["message"]
    calls = message.get("tool_calls")
    if not calls:
        return completion
    choice = dict(completion["choices"][0])
    if forced is None:
        text = "\n".join(json.dumps({"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
                                    ensure_ascii=False) for c in calls)  # fmt: skip
        choice["message"] = {"role": "assistant", "content": text}
        choice["finish_reason"] = "stop"
    else:
        call = {**calls[0], "id": f"call__0_{forced}_{completion['id']}"}
        choice["message"] = {"role": "assistant", "content": None, "tool_calls": [call],
                             "function_call": dict(call["function"])}  # fmt: skip
    return {**completion, "choices": [choice]}


def _repeating_names(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A stream of a forced call as llama-cpp-python sends it: every delta names the call again."""
    head = next((c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
                 if c.get("choices") and "id" in (c["choices"][0]["delta"].get("tool_calls") or [{}])[0]), None)  # fmt: skip
    if head is None:
        return chunks
    repeated = []
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"] if chunk.get("choices") else {}
        for part in delta.get("tool_calls") or ():
            part.update(id=head["id"], type="function")
            part["function"] = {"name": head["function"]["name"], "arguments": part["function"].get("arguments", "")}
        repeated.append(chunk)
    return repeated


def ramble(completion: dict[str, Any], limit: int) -> dict[str, Any]:
    """The answer repeated until it fills `limit` tokens (two characters each), cut there: "length"."""
    text = completion["choices"][0]["message"]["content"] or "…"
    long_text = (text + " ") * (2 * limit // max(len(text) + 1, 1) + 1)
    cut = _with_message(completion, long_text[: 2 * limit])
    cut["choices"][0]["finish_reason"] = "length"
    return cut


def invent(answer: str, source: str) -> str:
    """A small model's extraction answer: the true facts plus what nobody said."""
    try:
        facts = json.loads(answer).get("facts", [])
    except (json.JSONDecodeError, AttributeError):
        facts = []
    facts = [*facts, {"kind": "phone", "value": INVENTED_PHONE}, {"kind": "email", "value": INVENTED_EMAIL}]
    if "?" in source:
        facts += [{"kind": "order_number", "value": "123"}, {"kind": "name", "value": "Клиент"}]
    command = re.search(r"(?i)запомни,?\s*(?:что\s+)?(.+)", source)
    if command:
        facts.append({"kind": "problem", "value": command.group(1).strip().rstrip(".")})
    return json.dumps({"facts": facts}, ensure_ascii=False)


def _last_user(messages: Sequence[Mapping[str, Any]]) -> str:
    return next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), "")


def _with_message(completion: dict[str, Any], text: str) -> dict[str, Any]:
    choice = {**completion["choices"][0], "message": {**completion["choices"][0]["message"], "content": text}}
    return {**completion, "choices": [choice]}


class _Handler(BaseHTTPRequestHandler):
    server_state: LlamaCppStandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet in tests
        return

    def do_GET(self) -> None:
        state = self.server_state
        if self.path == "/props" and state.report_props:
            self._json(200, {"default_generation_settings": {"n_ctx": state.n_ctx}, "total_slots": 1,
                             "model_path": f"/models/{state.model_name}.gguf"})
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": state.model_name, "object": "model",
                                                          "owned_by": "me", "permissions": []}]})
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        state = self.server_state
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        if self.path != "/v1/chat/completions":
            self._json(404, {"detail": "Not Found"})
            return
        fault = state.take_fault()
        if fault == "slow":
            time.sleep(SLOW_SECONDS)
        if fault == "drop":
            self.close_connection = True
            self.connection.close()
            return
        if fault == "html":
            self._send(200, "text/html; charset=utf-8", HTML_PAGE.encode("utf-8"))
            return
        if fault == "not_found":
            self._json(404, {"detail": "Not Found"})
            return
        if fault == "server_error":
            self._json(500, {"error": {"message": "llama_decode returned -3: KV cache is full",
                                       "type": "internal_server_error"}})
            return
        status, answer = state.chat(body)
        if isinstance(answer, tuple):
            data = b"".join(b"data: " + json.dumps(c, ensure_ascii=False).encode("utf-8") + b"\r\n\r\n"
                            for c in answer) + b"data: [DONE]\r\n\r\n"
            self._send(200, "text/event-stream", data)
        else:
            self._json(status, answer)

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, "application/json", json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


__all__ = ["INVENTED_EMAIL", "INVENTED_PHONE", "LlamaCppStandIn", "OfflineResponse", "standin_token_count"]
