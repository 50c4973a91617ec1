"""Small builders shared by the service tests."""

from __future__ import annotations

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
