"""Helpers written once, in notebook 01, and imported by the later notebooks' services.

Notebook 01 (`notebooks/01_stateless_call.ipynb`) shows each of these in a cell;
`tests/test_steps_match_notebooks.py` keeps the cell and this module identical. `validate_reply`
checks a reply with the exercise `check_reply` (notebook 01's exercise, taken through
`course_lib.your_code`), so every chat of the steps (01-05) validates replies with the student's function.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from IPython.display import HTML

from course_lib.llm.client import LLMResult, Message
from course_lib.your_code import on_each_call

# In notebook 01 this is one line: `check_reply = your_code("check_reply")` (the student's function
# once it passes its public cases, the course's version until then).
check_reply = on_each_call("check_reply")


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
    """The reply text if the model finished normally and said something; ChatServiceError, with the
    message for the customer, otherwise. The rules are the exercise `check_reply`'s."""
    try:
        return check_reply(result.text, result.finish_reason)
    except ValueError as problem:  # ReplyError and its subclasses are ValueErrors
        raise ChatServiceError(str(problem)) from None


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
