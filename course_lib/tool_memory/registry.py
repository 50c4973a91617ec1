"""The tools a model may call, and `run_tool_calls`: each call of one model answer run against them.

A tool is a name, a description for the model, a pydantic model of its arguments and a function.
Nothing a call does wrong is raised into the chat: an unknown tool, arguments that are not JSON or
do not validate, an exception inside the tool — each becomes that call's result, in Russian,
starting with «Ошибка», so the model can see what was wrong and try again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from course_lib.llm.tool_calls import ToolCallRequest, tool_result
from course_lib.messages import Message

ERROR_PREFIX = "Ошибка"
_PYDANTIC_WORDS = {
    "missing": "обязательное поле не задано",
    "extra_forbidden": "лишнее поле",
    "string_type": "нужна строка",
    "string_too_short": "пустая строка или слишком короткая",
    "string_too_long": "слишком длинная строка",
    "int_type": "нужно целое число",
    "int_parsing": "нужно целое число",
    "greater_than_equal": "слишком маленькое число",
    "less_than_equal": "слишком большое число",
}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any], str]

    def spec(self) -> dict[str, Any]:
        """The tool as a request's `tools` entry (its JSON schema from the pydantic model)."""
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": schema}}


def tool_specs(tools: Mapping[str, Tool]) -> list[dict[str, Any]]:
    return [tool.spec() for tool in tools.values()]


def run_tool_calls(calls: Sequence[ToolCallRequest], tools: Mapping[str, Tool]) -> list[Message]:
    """One `tool` message per call, in the calls' order, each answering its call's id."""
    return [tool_result(call.id, _run_one(call, tools)) for call in calls]


def _run_one(call: ToolCallRequest, tools: Mapping[str, Tool]) -> str:
    tool = tools.get(call.name)
    if tool is None:
        return f"{ERROR_PREFIX}: нет инструмента «{call.name}»; есть: {', '.join(tools) or 'никаких'}."
    if call.arguments is None:
        return f"{ERROR_PREFIX}: {call.error or 'аргументы не прочитаны'}."
    try:
        arguments = tool.arguments.model_validate(call.arguments)
    except ValidationError as error:
        return f"{ERROR_PREFIX}: аргументы не прошли проверку — {describe_validation(error)}."
    try:
        return str(tool.run(arguments))
    except Exception as error:  # a tool's failure is the model's information, not the chat's crash
        return f"{ERROR_PREFIX}: инструмент «{call.name}» не выполнен: {type(error).__name__}: {error}"


def describe_validation(error: ValidationError) -> str:
    """Pydantic's errors in Russian, one «поле: что не так» per problem."""
    parts = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem.get("loc", ())) or "аргументы"
        parts.append(f"{field}: {_PYDANTIC_WORDS.get(problem.get('type', ''), problem.get('msg', ''))}")
    return "; ".join(parts)
