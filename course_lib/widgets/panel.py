"""`chat_panel(service)`: the chat on the left; the inspector and the budget slider on the right."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from course_lib.widgets.budget import DEFAULT_PROBE_TEXT, BudgetExplorer
from course_lib.widgets.chat import ChatServiceLike, ChatWidget
from course_lib.widgets.inspector import ContextInspector
from course_lib.widgets.render import run_hint


class ChatPanel(widgets.HBox):
    """The three widgets wired together; reach them as `.chat`, `.inspector`, `.budget`."""

    def __init__(
        self,
        service: ChatServiceLike,
        *,
        session_id: str | None = None,
        new_session_id: Callable[[], str] | None = None,
        probe_text: str = DEFAULT_PROBE_TEXT,
        **kwargs: Any,
    ) -> None:
        self.service = service
        self.chat = ChatWidget(service, session_id=session_id, new_session_id=new_session_id,
                               layout=widgets.Layout(flex="1 1 45%", min_width="320px",
                                                     padding="0 8px 0 0"))
        self.inspector = ContextInspector(self.chat)
        self.budget = BudgetExplorer(service, self.chat, probe_text=probe_text,
                                     layout=widgets.Layout(margin="10px 0 0 0",
                                                           border_top="1px solid #ddd"))
        right = widgets.VBox([self.inspector, self.budget],
                             layout=widgets.Layout(flex="1 1 55%", min_width="360px"))
        super().__init__(children=[self.chat, right],
                         layout=kwargs.pop("layout", widgets.Layout(width="100%",
                                                                    align_items="flex-start",
                                                                    flex_flow="row wrap")),
                         **kwargs)
        self.add_class("course-chat-panel")

    def __repr__(self) -> str:  # text/plain fallback (see ChatWidget.__repr__)
        return run_hint("Чат с инспектором контекста", "чтобы открыть чат")


def chat_panel(
    service: Any, *, session_id: str | None = None, probe_text: str = DEFAULT_PROBE_TEXT
) -> ChatPanel:
    """Chat, context inspector and budget slider side by side.

    `service` is a `ChatService` (or anything with the same methods); a `ChatApp` from
    `build_chat_app()` works too and is unwrapped to its `.chat_service`. `probe_text` is the
    budget explorer's "next message" (pass the notebook scenario's recall question).
    """
    service = getattr(service, "chat_service", service)
    return ChatPanel(service, session_id=session_id, probe_text=probe_text)
