"""`ToolMemoryChat`: the support chat whose model manages its own memory through tool calls.

One turn is a loop: send the request with the tools → the model calls some → run them, append the
assistant `tool_calls` message and one result per call → ask again, until the model answers in
text or `max_steps` rounds of calls were made. Only a final reply that passed its checks changes
anything: the turn (the customer's message, every exchange, the reply) joins the history as one
unit, the memory edits of the turn are written, and the turn is archived for later searches.
A failure at any step leaves the history and the memory exactly as they were.

A model that answers in plain text instead of calling a tool is simply answered: its reply is the
turn's reply, and nothing is remembered (the lesson shows why that loses facts).

The steps are the exercises of notebook 09 and can be passed in (the notebook passes the
student's, through `your_code`): `group_tool_exchanges` cuts the history into whole turns for the
window, `run_tool_loop` runs the loop of one turn, `run_tool_calls` runs a round of calls,
`edit_core_memory` makes the core-memory edits, and `add_exchange` (the notebook's fill-in) puts a
round into the turn. The loop knows nothing of the chat: it gets `ask_model(messages)` and
`run_calls(tool_calls)` from `_run_turn`, which build the request, count tokens, check the reply and
report each call (`on_step`) around it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course_lib.chat_service import ChatService, normalize_user_text, validate_reply
from course_lib.course_versions.run_tool_loop import run_tool_loop as course_run_tool_loop
from course_lib.llm.errors import LLMClientError
from course_lib.llm.tool_calls import assistant_message, looks_like_call
from course_lib.memory.store import LongTermStore
from course_lib.messages import Message
from course_lib.prompts.support_chat.v1_3_0 import SUPPORT_CHAT_PROMPT_V1_3_0
from course_lib.russian import plural, tokens
from course_lib.steps.tool_memory import add_exchange as course_add_exchange
from course_lib.tokenizer import TokenCounter
from course_lib.tool_memory.core_memory import edit_core_memory as course_edit_core_memory
from course_lib.tool_memory.core_memory import render_core_memory
from course_lib.tool_memory.exchanges import group_tool_exchanges as course_group_tool_exchanges
from course_lib.tool_memory.exchanges import newest_turns_that_fit
from course_lib.tool_memory.memory_tools import MemoryTools
from course_lib.tool_memory.registry import run_tool_calls as course_run_tool_calls
from course_lib.tool_memory.registry import tool_specs
from course_lib.your_code import recording

MAX_STEPS = 4
"""Rounds of tool calls per turn; the request after the last round must be answered in text."""
TIMES = ("раз", "раза", "раз")
SHOWN_CHARS = 60


class ToolAgentError(RuntimeError):
    """The turn could not be completed; the history and the memory are unchanged."""


@dataclass(frozen=True)
class ToolStep:
    """One call the model made this turn and what it got back."""

    name: str
    arguments: str
    result: str

    def line(self) -> str:
        """`⚙ имя(аргументы) → результат`, shortened to one line."""
        return f"⚙ {self.name}({_short(self.arguments)}) → {_short(self.result)}"


@dataclass(frozen=True)
class ToolReply:
    text: str
    steps: tuple[ToolStep, ...]
    turn: tuple[Message, ...]
    """The whole turn as it joined the history: question, exchanges, reply."""
    model_calls: int
    input_tokens: int
    """Input tokens of all the turn's requests, by the server's count when it sent one."""
    request: tuple[Message, ...] = ()
    """The turn's last request, the one answered in text (what a context inspector shows)."""
    implementations: tuple[tuple[str, str], ...] = ()
    """Which implementation of each exercise ran for this turn (see `ChatReply.implementations`)."""


class ToolMemoryChat:
    """One user's chat with memory tools; `new_session()` starts a dialogue, the memory stays."""

    def __init__(
        self,
        llm_client: Any,
        store: LongTermStore,
        user_id: str,
        *,
        input_token_budget: int = 3000,
        max_steps: int = MAX_STEPS,
        limits: dict[str, int] | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], float] = time.time,
        new_session_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        group_tool_exchanges: Callable[[list[Message]], list[list[Message]]] = course_group_tool_exchanges,
        run_tool_calls: Callable[[list[dict], dict], list[Message]] = course_run_tool_calls,
        edit_core_memory: Callable[[dict, dict, dict], dict] = course_edit_core_memory,
        add_exchange: Callable[[list[Message], Message, list[Message]], list[Message]] = course_add_exchange,
        run_tool_loop: Callable[..., list[Message]] = course_run_tool_loop,
    ) -> None:
        if not isinstance(user_id, str) or not user_id.strip():
            raise ToolAgentError("Нужно непустое имя пользователя: память ведётся для каждого клиента отдельно.")
        if isinstance(input_token_budget, bool) or not isinstance(input_token_budget, int) or input_token_budget < 1:
            raise ToolAgentError("Бюджет входа должен быть целым числом токенов не меньше 1.")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ToolAgentError("max_steps должен быть целым числом не меньше 1.")
        self.llm_client = llm_client
        self.user_id = user_id.strip()
        self.tools = MemoryTools(store, self.user_id, limits=limits, clock=clock, edit_core_memory=edit_core_memory)
        self.group_tool_exchanges = group_tool_exchanges
        self.run_tool_calls = run_tool_calls
        self.add_exchange = add_exchange
        self.run_tool_loop = run_tool_loop
        self.input_token_budget = input_token_budget
        self.max_steps = max_steps
        self.counter = counter or TokenCounter()
        self._new_session_id = new_session_id
        self._clock = clock
        self.new_session()

    def new_session(self) -> str:
        self.session_id = self._new_session_id()
        self._history: list[Message] = []
        self._turn_count = 0
        return self.session_id

    @property
    def history(self) -> tuple[Message, ...]:
        """The session's messages, every tool exchange included, as they are sent."""
        return tuple(self._history)

    def instruction(self) -> Message:
        memory = render_core_memory(self.tools.blocks(), self.tools.limits)
        return {"role": "developer", "content": f"{SUPPORT_CHAT_PROMPT_V1_3_0.render()}\n\n{memory}"}

    def reply(self, user_text: str, *, on_step: Callable[[ToolStep], None] | None = None) -> ToolReply:
        text = normalize_user_text(user_text, ToolAgentError)
        self.tools.begin()
        try:
            with recording() as used:  # the student's functions (or the course's) that ran for this turn
                pending, steps, calls, spent, request = self._run_turn(text, on_step)
        except BaseException:
            self.tools.begin()  # what the failed turn staged is dropped, not left for /memory or the next turn
            raise
        turn_number = self._turn_count + 1
        self.tools.commit(self.session_id, turn_number)
        self.tools.store.archive_turn(
            self.user_id, self.session_id, turn_number, text, pending[-1]["content"], now=self._clock()
        )
        self._history += pending
        self._turn_count = turn_number
        return ToolReply(pending[-1]["content"], tuple(steps), tuple(pending), calls, spent, tuple(request),
                         tuple(used.items()))

    def _run_turn(
        self, text: str, on_step: Callable[[ToolStep], None] | None
    ) -> tuple[list[Message], list[ToolStep], int, int, list[Message]]:
        """The loop of one turn: (its messages, the calls made, model calls, input tokens, last request).

        `run_tool_loop` drives it; the two callables it gets do the chat's part of each round."""
        steps: list[ToolStep] = []
        calls = spent = 0
        request: list[Message] = []
        still_calling = False  # the last reply called tools
        specs = tool_specs(self.tools.registry)
        turns = self._saved_turns()  # the history does not change during a turn: grouped once

        def ask_model(pending: list[Message]) -> Message:
            nonlocal calls, spent, request, still_calling
            request = self._request(turns, pending)
            try:
                result = self.llm_client.generate(request, tools=specs)
            except LLMClientError as error:
                raise ToolAgentError(f"Не удалось получить ответ модели: {error} Память и история не изменились.") from error
            calls += 1
            spent += result.prompt_tokens or self.counter.count_messages(request)
            still_calling = bool(result.tool_calls)
            if still_calling:
                return assistant_message(result.text, result.tool_calls)
            return {"role": "assistant", "content": self._checked_text(result)}

        def run_calls(tool_calls: list[dict]) -> list[Message]:
            try:
                results = self.run_tool_calls(tool_calls, self.tools.registry)
            except (TypeError, ValueError) as error:
                raise ToolAgentError(
                    f"Вызовы модели не выполнены: {error}. Ход отменён, память и история не изменились."
                ) from error
            for call, answer in zip(tool_calls, results):
                function = call.get("function", {})
                step = ToolStep(str(function.get("name", "")), str(function.get("arguments", "")),
                                str(answer.get("content", "")))  # fmt: skip
                steps.append(step)
                if on_step is not None:
                    on_step(step)
            return results

        question = ChatService.build_user_message(text)
        try:
            pending = self.run_tool_loop(ask_model, run_calls, self.add_exchange, [question], self.max_steps)
        except ToolAgentError:
            raise
        except RuntimeError as error:
            if not (still_calling and calls == self.max_steps + 1):
                raise  # not the step limit: the loop's own failure, shown as it is
            raise ToolAgentError(  # the loop's step limit: the request after the last round called tools
                f"Модель вызывала инструменты {plural(self.max_steps, TIMES)} подряд и так и не ответила: "
                "ход отменён, память и история не изменились."
            ) from error
        return pending, steps, calls, spent, request

    @staticmethod
    def _checked_text(result: Any) -> str:
        """The text of a reply without calls, or ToolAgentError: never a call the model wrote as text."""
        if looks_like_call(result.text):
            shown = " ".join((result.text or "").split())[:80]
            raise ToolAgentError(
                f"Модель ответила не текстом для клиента, а вызовом инструмента, который не удалось разобрать "
                f"(«{shown}…»). Ход не сохранён: память и история не изменились. Так отвечают маленькие "
                "локальные модели (Qwen2.5-Coder-0.5B на llama-cpp-python): для памяти через инструменты нужна "
                "модель, которая вызывает их по протоколу."
            )
        return validate_reply(result, ToolAgentError)

    def _saved_turns(self) -> list[list[Message]]:
        try:
            return self.group_tool_exchanges(list(self._history))
        except ValueError as error:
            raise ToolAgentError(f"История сессии испорчена: {error}. Запрос не отправлен.") from error

    def _request(self, turns: list[list[Message]], pending: list[Message]) -> list[Message]:
        """Instruction (with core memory) + the newest whole turns that fit + this turn so far."""
        instruction = self.instruction()
        fixed = self.counter.count_messages([instruction, *pending])
        if fixed > self.input_token_budget:
            raise ToolAgentError(
                f"Инструкция, основная память и этот ход уже занимают {tokens(fixed)} при бюджете "
                f"{self.input_token_budget}: запрос не отправлен, память и история не изменились."
            )
        cost = lambda turn: sum(self.counter.count_message(m) for m in turn)  # noqa: E731
        window = newest_turns_that_fit(turns, self.input_token_budget - fixed, cost)
        return [instruction, *(m for turn in window for m in turn), *pending]


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"
