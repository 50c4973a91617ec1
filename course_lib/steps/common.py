"""Helpers written once, in notebook 01, and imported by the later notebooks' services.

Notebook 01 (`notebooks/01_stateless_call.ipynb`) shows each of these in a cell;
`tests/test_steps_match_notebooks.py` keeps the cell and this module identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from IPython.display import HTML

from course_lib.llm.client import LLMResult, Message


class ChatServiceError(RuntimeError):
    """The chat could not produce a reply; the message is meant for the user."""


@dataclass(frozen=True)
class ChatReply:
    text: str
    model: str
    prompt_id: str
    prompt_version: str
    elapsed_seconds: float
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    response_id: str
    request_messages: tuple[Message, ...]  # what this call sent to the model


def validate_reply(result: LLMResult) -> str:
    """The reply text if the model finished normally; ChatServiceError otherwise."""
    if result.finish_reason == "length":
        raise ChatServiceError("Ответ остановлен из-за ограничения длины.")
    if result.finish_reason != "stop":
        raise ChatServiceError(f"Модель не вернула готовый ответ. Причина завершения: {result.finish_reason}.")
    if result.text is None:
        raise ChatServiceError("Модель не вернула текст ответа.")
    text = result.text.strip()
    if not text:
        raise ChatServiceError("Модель вернула пустой ответ.")
    return text


def requests_table(requests: dict[str, tuple[Message, ...]], max_chars: int = 70) -> HTML:
    """Requests side by side: one column per request, one coloured cell per message."""
    colors = {"developer": "#eceff1", "system": "#eceff1", "user": "#e3f2fd", "assistant": "#e8f5e9"}

    def cell(message: Message) -> str:
        text = " ".join(message["content"].split())
        text = text if len(text) <= max_chars else text[: max_chars - 1] + "…"
        style = f"background:{colors[message['role']]};color:#000;text-align:left;vertical-align:top"
        return f'<td style="{style}"><b>{message["role"]}</b><br>{escape(text)}</td>'

    depth = max((len(messages) for messages in requests.values()), default=0)
    head = "".join(f'<th style="text-align:left">{escape(title)}</th>' for title in requests)
    rows = "".join(
        "<tr>" + "".join(cell(m[i]) if i < len(m) else "<td></td>" for m in requests.values()) + "</tr>"
        for i in range(depth)
    )
    return HTML(f"<table><tr>{head}</tr>{rows}</table>")
