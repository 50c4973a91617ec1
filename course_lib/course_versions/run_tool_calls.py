"""The course's version of exercises/run_tool_calls.py (notebook 09)."""

import json


def _checked(call: object) -> tuple[str, str, str]:
    """(id, name, arguments) of one call, or ValueError: a malformed call is the program's bug."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        raise ValueError("у вызова нет словаря function")
    call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
    if not (isinstance(call_id, str) and call_id and isinstance(name, str) and isinstance(arguments, str)):
        raise ValueError("у вызова должны быть строки id, function.name и function.arguments")
    return call_id, name, arguments


def _parsed(arguments: str) -> dict | None:
    if not arguments.strip():
        return {}  # some servers send "" for a call without arguments
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def run_tool_calls(tool_calls: list[dict], tools: dict) -> list[dict]:
    if not isinstance(tool_calls, list):
        raise TypeError("tool_calls должен быть списком")
    checked = [_checked(call) for call in tool_calls]
    ids = [call_id for call_id, _, _ in checked]
    if len(set(ids)) != len(ids):
        raise ValueError("у двух вызовов одинаковый id")
    results = []
    for call_id, name, arguments in checked:
        if name not in tools:
            content = f"Ошибка: нет инструмента «{name}»."
        elif (parsed := _parsed(arguments)) is None:
            content = "Ошибка: аргументы должны быть JSON-объектом."
        else:
            try:
                content = tools[name](**parsed)
            except Exception as error:  # the model's mistake or the tool's failure: the model reads it
                content = f"Ошибка: {error}"
        results.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return results
