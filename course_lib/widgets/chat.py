"""The chat widget: the console chat of `python -m course_lib chat`, as something to click.

`ChatController` holds the state and the actions (send, new dialogue) and knows nothing about
ipywidgets, so tests drive it directly. `ChatWidget` is a thin ipywidgets layer over it: a message
box, "Отправить" and "Новый диалог" buttons, the Session ID, the conversation, and the console's
metrics after each reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol
from uuid import uuid4

import ipywidgets as widgets

from course_lib.chat_service import ChatReply, ChatServiceError, SessionSnapshot
from course_lib.console import print_reply
from course_lib.prompts.tags import unwrap_tag
from course_lib.widgets.chat_input import ChatInput
from course_lib.widgets.context import ContextView, context_from_request
from course_lib.widgets.render import (
    TranscriptEntry,
    esc,
    notice,
    render_code_line,
    render_metrics,
    render_transcript,
    run_hint,
)
from course_lib.your_code import used_line

INPUT_HINT = "Enter — отправить, Shift+Enter — новая строка"
STREAMING_NOTE = "печатает…"
UNSAVED_NOTE = "ответ оборвался и не сохранён в истории"


class ChatServiceLike(Protocol):
    """What the widgets need from a chat service (`ChatService` has all of it)."""

    history_policy: Any

    def reply(self, session_id: str, user_text: str) -> ChatReply: ...

    def reset_session(self, session_id: str) -> None: ...

    def get_session(self, session_id: str) -> SessionSnapshot: ...

    def preview(self, session_id: str, user_text: str, policy: Any = None) -> Any: ...


Listener = Callable[["ChatController"], None]


def describe_error(error: Exception) -> str:
    """A Russian line for the widget. The service's own errors are already written for users."""
    if isinstance(error, ChatServiceError):
        return f"Ошибка чата: {error}"
    return f"Непредвиденная ошибка ({type(error).__name__}): {error}"


def has_summary_service(service: Any) -> bool:
    """Does the service fold old turns into a summary? (`ChatService` keeps it as `_summary_service`.)

    Without one, the widgets say nothing about summaries: a student of notebook 04 has not met them.
    A service that does not tell is assumed to have one.
    """
    for name in ("summary_service", "_summary_service"):
        if hasattr(service, name):
            return getattr(service, name) is not None
    return True


def metric_lines(reply: ChatReply, *, summary: bool = True) -> list[str]:
    """The console's lines about a reply (without the reply text itself), plus the call count.

    `summary=False` drops the console's summary lines (always "нет" for a service without one).
    """
    lines: list[str] = []
    print_reply(reply, lines.append)
    code = used_line(getattr(reply, "implementations", ()))  # shown on its own line, under the reply
    lines = [line for line in lines if not line.startswith("Поддержка: ") and line != code]
    if not summary:
        lines = [line for line in lines if not line.lower().startswith("summary")]
    lines.append(f"Вызовов модели на этом ходу: {reply.llm_calls}")
    if reply.summary_total_tokens is not None:
        lines.append(f"Токенов на создание сводки: {reply.summary_total_tokens}")
    return lines


def transcript_from_messages(messages: Sequence[Mapping[str, str]]) -> list[TranscriptEntry]:
    """A stored session's messages as the conversation view shows them."""
    return [
        TranscriptEntry(
            role=message["role"],
            text=unwrap_tag("customer_message", message["content"])
            if message["role"] == "user"
            else message["content"],
        )
        for message in messages
    ]


class ChatController:
    """The chat's state: Session ID, conversation, last reply, its context, the last error.

    A failed send changes nothing here (and `ChatService` guarantees the session is unchanged too):
    only `error` is set, so the student can fix the message and press the button again.
    """

    def __init__(
        self,
        service: ChatServiceLike,
        *,
        session_id: str | None = None,
        new_session_id: Callable[[], str] | None = None,
    ) -> None:
        self.service = service
        self.summary_enabled = has_summary_service(service)
        self._new_session_id = new_session_id or (lambda: uuid4().hex)
        self.session_id: str = session_id or self._new_session_id()
        self.transcript: list[TranscriptEntry] = []
        self.last_reply: ChatReply | None = None
        self.last_context: ContextView | None = None
        self.error: str | None = None
        self.notice: str | None = None
        self.pending: list[TranscriptEntry] = []
        """The message being answered and the reply streaming in (or the part of it that broke off)."""
        self.streams = _accepts_on_delta(service)
        self._listeners: list[Listener] = []
        if session_id is not None:
            # Continuing an existing conversation: show what the session still holds.
            try:
                snapshot = service.get_session(session_id)
            except Exception as error:  # noqa: BLE001 - shown in the widget, not raised
                self.error = describe_error(error)
            else:
                self.transcript = transcript_from_messages(snapshot.messages)
                if snapshot.summary:
                    self.notice = "Более ранние сообщения этой сессии хранятся только в сводке."

    @property
    def budget(self) -> int:
        return int(self.service.history_policy.input_token_budget)

    @property
    def implementations(self) -> tuple[tuple[str, str], ...]:
        """Which implementation of each exercise ran for the last reply, as the reply recorded it."""
        return tuple(getattr(self.last_reply, "implementations", ()) or ())

    @property
    def code_line(self) -> str | None:
        """«Ответ собран: … — ваш код, … — версия курса.» for the last reply; None before one, or
        when no exercise ran for it."""
        return used_line(self.implementations)

    @property
    def metrics(self) -> list[str]:
        if self.last_reply is None:
            return []
        return metric_lines(self.last_reply, summary=self.summary_enabled)

    def subscribe(self, listener: Listener) -> None:
        """Call `listener(controller)` after every send, new dialogue or error."""
        self._listeners.append(listener)

    @property
    def shown_transcript(self) -> list[TranscriptEntry]:
        """The saved conversation plus what is being answered right now (or broke off)."""
        return [*self.transcript, *self.pending]

    def send(self, text: str) -> ChatReply | None:
        """Ask the service for a reply; on failure keep everything as it was and set `error`.

        With a streaming service the reply appears piece by piece (listeners are called on every
        piece); a reply that breaks off stays on screen marked as not saved, until the next send.
        """
        self.error = None
        self.pending = []
        streamed: list[str] = []
        try:
            before = self.service.get_session(self.session_id)
            budget = self.budget
            if self.streams:
                self.pending = [TranscriptEntry("user", text.strip(), pending=True)]
                reply = self.service.reply(
                    self.session_id, text, on_delta=lambda piece: self._on_piece(streamed, piece)
                )
            else:
                reply = self.service.reply(self.session_id, text)
        except Exception as error:  # noqa: BLE001 - the widget is the boundary: show, do not raise
            self.error = describe_error(error)
            self.pending = (
                [TranscriptEntry("user", text.strip(), pending=True),
                 TranscriptEntry("assistant", "".join(streamed), pending=True, note=UNSAVED_NOTE)]
                if streamed else []
            )
            self._notify()
            return None
        self.pending = []

        self.transcript.extend(
            [TranscriptEntry("user", text.strip()), TranscriptEntry("assistant", reply.text)]
        )
        self.last_reply = reply
        self.notice = reply.notes() if hasattr(reply, "notes") else None  # summary/memory failures, said
        try:
            after = self.service.get_session(self.session_id)
            self.last_context = context_from_request(
                reply.request_messages,
                before.messages,
                counter=self.service.history_policy.token_counter,
                estimated_tokens=reply.estimated_prompt_tokens,
                budget=budget,
                summary=after.summary,
                summary_updated=reply.summary_updated,
                prompt_tokens=reply.prompt_tokens,
                implementations=self.implementations,
            )
        except Exception as error:  # noqa: BLE001
            self.last_context = None
            self.error = f"Ответ получен, но состав запроса показать не удалось: {describe_error(error)}"
        self._notify()
        return reply

    def new_dialog(self) -> str:
        """The console's /new: clear the current session, switch to a fresh Session ID."""
        self.error = None
        try:
            self.service.reset_session(self.session_id)
        except Exception as error:  # noqa: BLE001
            self.error = describe_error(error)
            self._notify()
            return self.session_id
        self.session_id = self._new_session_id()
        self.transcript = []
        self.last_reply = None
        self.last_context = None
        self.notice = None
        self._notify()
        return self.session_id

    def _on_piece(self, streamed: list[str], piece: str) -> None:
        streamed.append(piece)
        self.pending = [
            self.pending[0],
            TranscriptEntry("assistant", "".join(streamed), pending=True, note=STREAMING_NOTE),
        ]
        self._notify()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener(self)


def _accepts_on_delta(service: Any) -> bool:
    """Can this service stream (`ChatService.can_stream`)? Services that do not say, cannot."""
    return bool(getattr(service, "can_stream", False))


class ChatWidget(widgets.VBox):
    """The chat as ipywidgets. `ChatWidget(service)` or `ChatWidget(controller=...)`."""

    def __init__(
        self,
        service: ChatServiceLike | None = None,
        *,
        session_id: str | None = None,
        new_session_id: Callable[[], str] | None = None,
        controller: ChatController | None = None,
        **kwargs: Any,
    ) -> None:
        if controller is None:
            if service is None:
                raise TypeError("ChatWidget нужен сервис чата (service) или готовый controller.")
            controller = ChatController(service, session_id=session_id, new_session_id=new_session_id)
        self.controller = controller

        self.session_html = widgets.HTML()
        self.transcript_html = widgets.HTML(layout=widgets.Layout(border="1px solid #ddd", padding="4px"))
        self.transcript_html.add_class("course-chat-transcript")
        self.code_html = widgets.HTML()  # which code answered: the last reply's own record
        self.code_html.add_class("course-chat-code")
        self.message_box = ChatInput(placeholder="Сообщение клиента…", rows=2,
                                     layout=widgets.Layout(width="100%"))
        self.message_box.add_class("course-chat-input")
        self.message_box.on_submit(lambda _box: self._on_send())
        self.send_button = widgets.Button(description="Отправить", button_style="primary",
                                          icon="paper-plane")
        self.send_button.add_class("course-chat-send")
        self.new_dialog_button = widgets.Button(description="Новый диалог", icon="refresh",
                                                tooltip="Как /new в консоли: очистить сессию и начать новую")
        self.new_dialog_button.add_class("course-chat-new")
        self.status_html = widgets.HTML()
        self.status_html.add_class("course-chat-status")
        self.metrics_html = widgets.HTML()
        self.metrics_html.add_class("course-chat-metrics")

        self.send_button.on_click(self._on_send)
        self.new_dialog_button.on_click(self._on_new_dialog)
        controller.subscribe(lambda _controller: self.refresh())

        super().__init__(
            children=[
                widgets.HTML("<b>Чат поддержки</b>"),
                self.session_html,
                self.transcript_html,
                self.code_html,
                self.message_box,
                widgets.HTML(f'<div class="course-chat-hint" style="font-size:12px;color:#555;'
                             f'line-height:1.3">{INPUT_HINT}</div>'),
                widgets.HBox([self.send_button, self.new_dialog_button]),
                self.status_html,
                self.metrics_html,
            ],
            **kwargs,
        )
        self.add_class("course-chat")
        self.refresh()

    # The text/plain fallback: what to do to see the chat. Short and stable: the default repr
    # dumps every child's HTML (with the random Session ID), which nbval would compare.
    def __repr__(self) -> str:
        return run_hint("Чат поддержки", "чтобы открыть чат")

    def refresh(self) -> None:
        controller = self.controller
        self.session_html.value = (
            f'<span style="font-size:12px">Session ID: <code class="course-session-id">'
            f"{esc(controller.session_id)}</code></span>"
        )
        self.transcript_html.value = render_transcript(controller.shown_transcript)
        self.code_html.value = render_code_line(controller.implementations)
        if controller.error:
            self.status_html.value = notice(controller.error, "error")
        elif controller.notice:
            self.status_html.value = notice(controller.notice)
        else:
            self.status_html.value = ""
        self.metrics_html.value = render_metrics(controller.metrics)

    def _on_send(self, _button: widgets.Button | None = None) -> None:
        self._set_busy(True)
        try:
            reply = self.controller.send(self.message_box.value)
        finally:
            self._set_busy(False)
        if reply is not None:
            self.message_box.value = ""

    def _on_new_dialog(self, _button: widgets.Button | None = None) -> None:
        self.controller.new_dialog()
        self.message_box.value = ""

    def _set_busy(self, busy: bool) -> None:
        self.message_box.disabled = busy
        self.send_button.disabled = busy
        self.new_dialog_button.disabled = busy
        if busy:
            self.status_html.value = notice("Модель отвечает…")
