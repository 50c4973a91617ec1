"""The context inspector: what the last request held, drawn against the token budget.

Every message that went to the model, marked developer / summary / kept history / new user
message, with its token count; the session's messages that were left out; a bar of the budget;
the current summary. Notebooks 04 and 05 use it to show the window sliding and the summary taking
over.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from course_lib.widgets.chat import ChatController
from course_lib.widgets.context import ContextView
from course_lib.widgets.render import render_context, run_hint


class ContextInspector(widgets.VBox):
    """Shows a `ContextView`. `ContextInspector(chat)` follows a chat widget or controller.

    `show_summary` defaults to whether the followed chat's service has a summary service.
    """

    def __init__(
        self,
        chat: Any = None,
        *,
        title: str = "Инспектор контекста",
        show_summary: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self.view: ContextView | None = None
        controller = getattr(chat, "controller", chat)
        if show_summary is None:
            show_summary = getattr(controller, "summary_enabled", True)
        self.show_summary = show_summary
        self.html = widgets.HTML(layout=widgets.Layout(max_height="640px", overflow="auto"))
        self.html.add_class("course-inspector-body")
        super().__init__(children=[widgets.HTML(f"<b>{title}</b>"), self.html], **kwargs)
        self.add_class("course-inspector")
        self.show(None)
        if chat is not None:
            self.attach(chat)

    def __repr__(self) -> str:  # text/plain fallback (see ChatWidget.__repr__)
        return run_hint("Инспектор контекста", "чтобы увидеть запрос к модели")

    def attach(self, chat: Any) -> None:
        """Follow a `ChatWidget` or `ChatController`: redraw after each reply or new dialogue."""
        controller: ChatController = getattr(chat, "controller", chat)
        controller.subscribe(lambda c: self.show(c.last_context))
        self.show(controller.last_context)

    def show(self, view: ContextView | None) -> None:
        self.view = view
        self.html.value = render_context(view, show_summary=self.show_summary)
