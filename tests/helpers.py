"""Small builders shared by the service tests."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from course_lib.app import ChatApp, build_chat_app
from course_lib.config import Settings
from course_lib.llm.offline import OfflineModel
from course_lib.scenarios import COFFEE_DIALOGUE, MONITOR_DIALOGUE, MONITOR_RECALL  # noqa: F401


def make_app(settings: Settings, *, budget: int | None = None, with_summary: bool = True, **model_options) -> ChatApp:
    if budget is not None:
        settings = settings.model_copy(update={"chat_input_token_budget": budget})
    return build_chat_app(settings, offline_model=OfflineModel(**model_options), with_summary=with_summary)


def state(app: ChatApp, session_id: str) -> tuple:
    snapshot = app.chat_service.get_session(session_id)
    return snapshot.messages, snapshot.summary


@dataclass(frozen=True)
class CommandResult:
    """What `python -m course_lib …` would have returned: its exit code and its two streams."""

    returncode: int
    stdout: str
    stderr: str


def run_course_command(monkeypatch, args: list[str], lines: list[str] = (), **env: str) -> CommandResult:
    """`python -m course_lib ARGS` with LINES typed in, run in this process.

    The same entry point, argument parsing, settings and output as the command a student types,
    without starting Python and importing the chat again for every call (about a second of CPU).
    A developer's own OPENAI_/LLM_/CHAT_ variables are removed, as for a subprocess with a clean
    environment; tests that are about separate processes start real ones.
    """
    from course_lib.__main__ import main

    for name in list(os.environ):
        if name.startswith(("OPENAI_", "LLM_", "CHAT_")):
            monkeypatch.delenv(name)
    for name, value in {"LLM_BACKEND": "offline", "COURSE_DOTENV": "0", **env}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(Path(__file__).resolve().parent)  # no .env here: only the variables above count
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as stop:  # argparse's usage errors
            code = stop.code if isinstance(stop.code, int) else 2
    return CommandResult(code, out.getvalue(), err.getvalue())
