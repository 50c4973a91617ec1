"""Reference solution for exercises/run_tool_calls.py (the statement lives in the stub)."""

import json

NOT_AN_OBJECT = "Ошибка: аргументы должны быть JSON-объектом."


def run_tool_calls(tool_calls: list[dict], tools: dict) -> list[dict]:
    if not isinstance(tool_calls, list):
        raise TypeError("tool_calls должен быть списком")
    seen = set()
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) else None
        if (not isinstance(function, dict) or not isinstance(call.get("id"), str) or not call["id"]
                or not isinstance(function.get("name"), str) or not isinstance(function.get("arguments"), str)):
            raise ValueError(f"вызов не по протоколу: {call!r}")
        if call["id"] in seen:
            raise ValueError(f"id {call['id']} повторяется")
        seen.add(call["id"])

    results = []
    for call in tool_calls:
        name, raw = call["function"]["name"], call["function"]["arguments"]
        results.append({"role": "tool", "tool_call_id": call["id"], "content": _run(tools, name, raw)})
    return results


def _run(tools: dict, name: str, raw: str) -> str:
    if name not in tools:
        return f"Ошибка: нет инструмента «{name}»."
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return NOT_AN_OBJECT
    if not isinstance(arguments, dict):
        return NOT_AN_OBJECT
    try:
        return tools[name](**arguments)
    except Exception as error:
        return f"Ошибка: {error}"
