"""The tools a model may call, and `run_tool_calls`: each call of one model answer run against them.

A tool is a name, a description for the model, a pydantic model of its arguments and a function.
Called with the call's arguments as keywords (what `run_tool_calls` does), it validates them first:
arguments that do not validate raise `ToolArgumentsError` with a Russian description, which
`run_tool_calls` turns into the call's result («Ошибка: …») — the model sees what was wrong and
can try again; nothing a call does wrong is raised into the chat.

`run_tool_calls` is the exercise of notebook 09 (the course's version; the notebook passes the
student's through `your_code`): it takes the calls as they are on the wire,
`{"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from course_lib.course_versions.run_tool_calls import run_tool_calls
from course_lib.validation_words import validation_field, validation_problem

__all__ = ["Tool", "ToolArgumentsError", "describe_validation", "run_tool_calls", "tool_specs"]


class ToolArgumentsError(ValueError):
    """A call's arguments did not validate; the message says which field and why, in Russian."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any], str]

    def __call__(self, /, **arguments: Any) -> str:
        try:
            validated = self.arguments.model_validate(arguments)
        except ValidationError as error:
            raise ToolArgumentsError(f"аргументы не прошли проверку — {describe_validation(error)}") from None
        return str(self.run(validated))

    def spec(self) -> dict[str, Any]:
        """The tool as a request's `tools` entry (its JSON schema from the pydantic model)."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": _schema(self.arguments)}}  # fmt: skip


@functools.lru_cache(maxsize=64)
def _cached_schema(arguments: type[BaseModel]) -> str:
    # Built once per model class: every request of a tool loop sends the same schemas.
    schema = arguments.model_json_schema()
    schema.pop("title", None)
    return json.dumps(schema)


def _schema(arguments: type[BaseModel]) -> dict[str, Any]:
    return json.loads(_cached_schema(arguments))  # a fresh copy: a caller may change its dict


def tool_specs(tools: Mapping[str, Tool]) -> list[dict[str, Any]]:
    return [tool.spec() for tool in tools.values()]


def describe_validation(error: ValidationError) -> str:
    """Pydantic's errors in Russian, one «поле: что не так» per problem."""
    return "; ".join(f"{validation_field(problem)}: {validation_problem(problem)}" for problem in error.errors())
