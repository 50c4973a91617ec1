"""The budget explorer: "what if CHAT_INPUT_TOKEN_BUDGET were smaller?" without calling the model.

Moving the slider re-runs `prepare()` on the current session (through `ChatService.preview()` with
`history_policy.with_budget(n)`): nothing is sent and the session does not change, so the student
can watch whole turns fall out of the window, newest kept, as the budget shrinks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from course_lib.widgets.chat import ChatController, ChatServiceLike, describe_error, has_summary_service
from course_lib.widgets.context import HISTORY, ContextView, context_from_request
from course_lib.widgets.render import BLOCK, esc, notice, render_context, run_hint

# Generic on purpose: notebooks pass their scenario's question (`probe_text=`).
DEFAULT_PROBE_TEXT = "Напомните, пожалуйста, номер моего заказа."
_UNLIMITED = 10**9


class BudgetController:
    """The state behind the slider: a budget, a probe message, and the window they give."""

    def __init__(
        self,
        service: ChatServiceLike,
        session_id: str | Callable[[], str],
        *,
        budget: int | None = None,
        probe_text: str = DEFAULT_PROBE_TEXT,
    ) -> None:
        self.service = service
        self._session_id = session_id
        self.configured_budget = int(service.history_policy.input_token_budget)
        self.budget = int(budget) if budget is not None else self.configured_budget
        self.probe_text = probe_text
        self.summary_enabled = has_summary_service(service)
        self.view: ContextView | None = None
        self.error: str | None = None
        self.required_tokens: int | None = None
        self.full_tokens: int | None = None

    @property
    def session_id(self) -> str:
        return self._session_id() if callable(self._session_id) else self._session_id

    def bounds(self) -> tuple[int, int]:
        """A sensible slider range: from "nothing but the required messages" to "all history fits".

        Below the lower end `prepare()` refuses (developer + summary + new message must fit).
        """
        full = self._preview(_UNLIMITED)
        self.full_tokens = full.estimated_tokens if full else None
        self.required_tokens = (
            full.estimated_tokens - full.tokens_of(HISTORY) if full else None
        )
        low = self.required_tokens or 1
        high = max(self.full_tokens or 0, self.configured_budget, low + 1)
        return low, int(math.ceil(high * 1.1 / 10) * 10)

    def set_budget(self, budget: int) -> ContextView | None:
        self.budget = int(budget)
        return self.refresh()

    def set_probe_text(self, text: str) -> ContextView | None:
        self.probe_text = text
        return self.refresh()

    def refresh(self) -> ContextView | None:
        """Re-run `prepare()` at the current budget; on failure keep a Russian `error`."""
        self.error = None
        self.view = self._preview(self.budget, record_error=True)
        return self.view

    def summary_line(self) -> str:
        view = self.view
        if view is None:
            return ""
        kept = view.count_of(HISTORY)
        total = kept + len(view.left_out)
        if total == 0:
            return "В сессии пока нет истории: напишите несколько сообщений в чате."
        line = (
            f"Бюджет {self.budget} → в окне ходов: {kept // 2} из {total // 2} (самые свежие), "
            f"выпадает: {len(view.left_out) // 2}."
        )
        if view.left_out and self.summary_enabled:
            line += " При настоящем ответе ChatService со сводкой свернул бы выпавшие ходы в сводку."
        elif view.left_out:
            line += " При настоящем ответе выпавшие ходы просто не попадут в запрос."
        return line

    def _preview(self, budget: int, *, record_error: bool = False) -> ContextView | None:
        session_id = self.session_id
        try:
            policy = self.service.history_policy.with_budget(budget)
            snapshot = self.service.get_session(session_id)
            prepared = self.service.preview(session_id, self.probe_text, policy=policy)
            return context_from_request(
                prepared.messages,
                snapshot.messages,
                counter=self.service.history_policy.token_counter,
                estimated_tokens=prepared.estimated_tokens,
                budget=budget,
                summary=snapshot.summary,
                origin="preview",
            )
        except Exception as error:  # noqa: BLE001 - shown in the widget, not raised
            if record_error:
                self.error = describe_error(error)
            return None


class BudgetExplorer(widgets.VBox):
    """A budget slider over the current session. Follows a chat: `BudgetExplorer(service, chat)`."""

    def __init__(
        self,
        service: ChatServiceLike,
        chat: Any = None,
        *,
        session_id: str | None = None,
        budget: int | None = None,
        probe_text: str = DEFAULT_PROBE_TEXT,
        **kwargs: Any,
    ) -> None:
        controller: ChatController | None = getattr(chat, "controller", chat)
        if controller is not None:
            source: str | Callable[[], str] = lambda: controller.session_id
        elif session_id is not None:
            source = session_id
        else:
            raise TypeError("BudgetExplorer нужен chat (виджет или контроллер) или session_id.")
        self.controller = BudgetController(service, source, budget=budget, probe_text=probe_text)
        self._syncing = False

        self.slider = widgets.IntSlider(
            value=self.controller.budget,
            min=1,
            max=max(self.controller.budget, 2),
            step=1,
            description="Бюджет",
            continuous_update=True,
            layout=widgets.Layout(width="98%"),
        )
        self.slider.add_class("course-budget-slider")
        self.probe_box = widgets.Text(
            value=probe_text,
            placeholder="Следующее сообщение клиента",
            layout=widgets.Layout(width="98%"),
        )
        self.probe_box.add_class("course-budget-probe")
        self.reset_button = widgets.Button(
            description=f"Как в настройках ({self.controller.configured_budget})",
            tooltip="Вернуть CHAT_INPUT_TOKEN_BUDGET из настроек",
            layout=widgets.Layout(width="auto"),
        )
        self.reset_button.add_class("course-budget-reset")
        self.summary_html = widgets.HTML()
        self.summary_html.add_class("course-budget-summary")
        self.html = widgets.HTML(layout=widgets.Layout(max_height="420px", overflow="auto"))
        self.html.add_class("course-budget-body")

        self.slider.observe(self._on_slider, names="value")
        self.probe_box.observe(self._on_probe, names="value")
        self.reset_button.on_click(lambda _b: self._set_slider(self.controller.configured_budget))
        if controller is not None:
            controller.subscribe(lambda _c: self.refresh())

        super().__init__(
            children=[
                widgets.HTML(
                    "<b>Бюджет окна</b> <span style='font-size:12px;color:#555'>— prepare() "
                    "на текущей сессии, без вызова модели</span>"
                ),
                self.slider,
                widgets.HTML("<span style='font-size:12px'>Новое сообщение для примерки:</span>"),
                self.probe_box,
                widgets.HBox([self.reset_button]),
                self.summary_html,
                self.html,
            ],
            **kwargs,
        )
        self.add_class("course-budget")
        self.refresh()

    def __repr__(self) -> str:  # text/plain fallback (see ChatWidget.__repr__)
        return run_hint("Бюджет окна", "чтобы двигать ползунок бюджета")

    def refresh(self) -> None:
        """Recompute the slider's range for the current session and redraw."""
        low, high = self.controller.bounds()
        value = min(max(self.controller.budget, low), high)
        self._syncing = True
        try:
            if low > self.slider.max:
                self.slider.max, self.slider.min = high, low
            else:
                self.slider.min, self.slider.max = low, high
            self.slider.value = value
        finally:
            self._syncing = False
        self.controller.set_budget(value)
        self._render()

    def _set_slider(self, value: int) -> None:
        self.slider.value = min(max(value, self.slider.min), self.slider.max)
        if self.slider.value != self.controller.budget:
            self._on_slider({"new": self.slider.value})

    def _on_slider(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        self.controller.set_budget(change["new"])
        self._render()

    def _on_probe(self, change: dict[str, Any]) -> None:
        self.controller.probe_text = change["new"]
        self.refresh()

    def _render(self) -> None:
        controller = self.controller
        if controller.error:
            self.summary_html.value = notice(controller.error, "error")
            self.html.value = ""
            return
        self.summary_html.value = (
            f'<div style="font-size:12px;margin:2px 0;{BLOCK}">{esc(controller.summary_line())}</div>'
        )
        self.html.value = render_context(controller.view, show_summary=controller.summary_enabled)
