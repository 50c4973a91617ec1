"""Tool calls on the wire: what a model asked to call, read from a completion or assembled from a stream.

A model that calls tools answers with `finish_reason == "tool_calls"` and an assistant message whose
`tool_calls` each name a function and carry its arguments as JSON *text*, which the model wrote and
which may be invalid. The application runs each call and answers it with one `tool` message that
names the call's id; only then may it ask the model again. This module only reads and checks that
shape; running the calls is the tool loop's job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from course_lib.messages import Message, ToolCall

ToolSpec = Mapping[str, Any]
"""One entry of a request's `tools`: {"type": "function", "function": {"name", "description", "parameters"}}."""


@dataclass(frozen=True)
class ToolCallRequest:
    """One call the model asked for. `arguments` is None when its JSON was invalid; `error` says why."""

    id: str
    name: str
    raw_arguments: str
    arguments: dict[str, Any] | None
    error: str | None = None

    def as_wire(self) -> ToolCall:
        """The call as it goes back to the model inside the assistant message, exactly as it came."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.raw_arguments}}


def read_call(call_id: Any, name: Any, raw_arguments: Any) -> ToolCallRequest:
    """A call from its three wire fields; bad JSON is recorded, never raised (the loop answers it)."""
    raw = raw_arguments if isinstance(raw_arguments, str) else ""
    call = ToolCallRequest(str(call_id or ""), str(name or ""), raw, None)
    try:
        arguments = json.loads(raw or "{}")
    except json.JSONDecodeError as error:
        return _with_error(call, f"аргументы — не JSON ({error.msg}, позиция {error.pos})")
    if not isinstance(arguments, dict):
        return _with_error(call, f"аргументы должны быть JSON-объектом, а пришло: {type(arguments).__name__}")
    return ToolCallRequest(call.id, call.name, raw, arguments)


def _with_error(call: ToolCallRequest, error: str) -> ToolCallRequest:
    return ToolCallRequest(call.id, call.name, call.raw_arguments, None, error)


def calls_of_message(message: Any) -> tuple[ToolCallRequest, ...]:
    """The calls of a non-streamed completion's message (an SDK object); () when it made none."""
    calls = getattr(message, "tool_calls", None) or ()
    found = []
    for call in calls:
        function = getattr(call, "function", None)
        found.append(read_call(getattr(call, "id", None), getattr(function, "name", None),
                               getattr(function, "arguments", None)))  # fmt: skip
    return tuple(found)


class StreamedCalls:
    """Tool calls assembled from stream deltas: the first delta of a call brings its index, id and
    name, later ones bring more of its arguments' text."""

    def __init__(self) -> None:
        self._parts: dict[int, dict[str, Any]] = {}

    def add(self, deltas: Any) -> None:
        for delta in deltas or ():
            index = getattr(delta, "index", None)
            index = index if isinstance(index, int) else len(self._parts)
            part = self._parts.setdefault(index, {"id": "", "name": "", "arguments": []})
            if getattr(delta, "id", None):
                part["id"] = delta.id
            function = getattr(delta, "function", None)
            if function is not None:
                name = getattr(function, "name", None)
                # OpenAI sends the name once; llama-cpp-python repeats it in every delta.
                if name and name != part["name"]:
                    part["name"] += name
                if getattr(function, "arguments", None):
                    part["arguments"].append(function.arguments)

    def calls(self) -> tuple[ToolCallRequest, ...]:
        return tuple(
            read_call(part["id"], part["name"], "".join(part["arguments"]))
            for _, part in sorted(self._parts.items())
        )


_TEXT_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def calls_in_text(text: str, offered: Collection[str]) -> tuple[str, tuple[ToolCallRequest, ...]]:
    """Calls a model wrote as text, when the server does not parse them (llama-cpp-python's default
    chat format renders the tools into the prompt and returns whatever the model wrote). Two forms:
    - Hermes blocks, `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (Qwen 2.5's template asks
      for them): each block is a call; one that is not such JSON is a call with `error`;
    - a reply that is nothing but such objects, one or more, perhaps in a ```json fence (what
      Qwen2.5-Coder-0.5B wrote on llama-cpp-python 0.3.36): read only when every object names an
      offered function, so an ordinary answer is never mistaken for a call.
    Returns (the text around the calls, the calls); (text, ()) when there are none."""
    if "<tool_call>" in text:
        calls = [_text_call(f"call_text_{n}", m.group(1)) for n, m in enumerate(_TEXT_CALL.finditer(text))]
        return _TEXT_CALL.sub("", text).strip(), tuple(calls)
    objects = _json_objects(_FENCE.sub("", text))
    if not objects or not all(isinstance(o.get("name"), str) and o["name"] in offered and "arguments" in o
                              for o in objects):  # fmt: skip
        return text, ()
    return "", tuple(_call_of(f"call_text_{n}", o) for n, o in enumerate(objects))


def looks_like_call(text: str | None) -> bool:
    """Whether a reply is a tool call the model wrote as text but that could not be read (a cut or
    malformed object): never an answer to show a customer."""
    body = _WRAPPER.sub("", _FENCE.sub("", text or "")).lstrip()
    return body.startswith(("{", "<tool_call>")) and '"name"' in body[:300]


# Tags a small model wraps its text call in, copying the request's own (`<customer_message>{…}`).
_WRAPPER = re.compile(r"^(?:\s*<(?!tool_call>)[a-z_]{1,40}>)+")


def _json_objects(text: str) -> list[dict[str, Any]] | None:
    """`text` as a run of JSON objects separated by whitespace, or None."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return found or None
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return None
        if not isinstance(value, dict):
            return None
        found.append(value)


def _text_call(call_id: str, body: str) -> ToolCallRequest:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        return _with_error(ToolCallRequest(call_id, "", body, None), f"вызов в тексте — не JSON ({error.msg})")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return _with_error(ToolCallRequest(call_id, "", body, None), 'в вызове нет "name" — имени инструмента')
    return _call_of(call_id, data)


def _call_of(call_id: str, data: Mapping[str, Any]) -> ToolCallRequest:
    arguments = data.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return read_call(call_id, data["name"], raw)


def offered(tools: Collection[Mapping[str, Any]]) -> set[str]:
    return {tool["function"]["name"] for tool in tools}


def assistant_message(content: str | None, calls: Sequence[ToolCallRequest]) -> Message:
    """The assistant message that carries `calls`, to be put before their results in the exchange."""
    return {"role": "assistant", "content": content or "", "tool_calls": [call.as_wire() for call in calls]}


def tool_result(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}  # type: ignore[typeddict-item]


def check_tools(tools: Any) -> list[dict[str, Any]]:
    """`tools` as a list of plain dicts, or ValueError in Russian naming what is wrong."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence) or not tools:
        raise ValueError("tools должен быть непустым списком описаний функций.")
    checked, names = [], set()
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(tool, Mapping) or tool.get("type") != "function" or not isinstance(name, str) or not name:
            raise ValueError(f'tools[{index}]: нужен {{"type": "function", "function": {{"name": …}}}}.')
        if name in names:
            raise ValueError(f"tools[{index}]: функция {name!r} описана дважды.")
        names.add(name)
        checked.append(json.loads(json.dumps(tool)))  # plain JSON: nothing of the caller's is kept
    return checked


def check_wire_message(index: int, message: Mapping[str, Any]) -> str | None:
    """What is wrong with the tool fields of one message (Russian), or None. Pairing calls with
    results is the server's rule and is left to it: a broken trim must fail as it would there."""
    role = message.get("role")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            return f"Сообщение №{index} (tool): нужен непустой tool_call_id — id вызова, на который оно отвечает."
        return None
    if "tool_call_id" in message:
        return f"Сообщение №{index}: tool_call_id бывает только у сообщения с ролью tool."
    if "tool_calls" not in message:
        return None
    calls = message["tool_calls"]
    if role != "assistant":
        return f"Сообщение №{index}: tool_calls бывают только у сообщения ассистента."
    if not isinstance(calls, list) or not calls:
        return f"Сообщение №{index}: tool_calls должен быть непустым списком."
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, Mapping) else None
        if (
            not isinstance(call, Mapping)
            or not isinstance(call.get("id"), str)
            or not call["id"]
            or not isinstance(function, Mapping)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("arguments"), str)
        ):
            return (
                f"Сообщение №{index}, вызов №{number}: нужен "
                '{"id": …, "type": "function", "function": {"name": …, "arguments": "<JSON-текст>"}}.'
            )
    return None
