"""The history policy: which part of a session's history fits into one request.

`SlidingWindowHistory.prepare()` always keeps the developer message, any fixed context (the summary)
and the new user message, then adds whole user/assistant turns from the newest back, and stops at
the first turn that does not fit the input budget.

Cost: each message is counted once per call (and `TokenCounter` remembers recent texts), and only
the turns that end up in the window plus the one that does not fit are counted at all. Splitting the
history into turns is a cheap O(n) pass with no tokenization.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from course_lib.messages import Message
from course_lib.russian import messages_count, tokens
from course_lib.token_calibration import corrected
from course_lib.tokenizer import REPLY_PRIMER_TOKENS, TokenCounter
from course_lib.whole_history import BrokenHistoryError, WholeHistory, validate_turn

__all__ = [
    "ChatHistoryError",
    "PreparedHistory",
    "SlidingWindowHistory",
    "TokenCounter",
    "split_into_turns",
]



class ChatHistoryError(RuntimeError):
    """The history is broken, or the required part of the request exceeds the budget."""


@dataclass(frozen=True)
class PreparedHistory:
    """One request, ready to send, and the figures that describe how it was built."""

    messages: list[Message]
    estimated_tokens: int
    context_history_messages: int
    removed_history_messages: int
    token_factor: float = 1.0
    """The provider correction the window used (see `token_calibration`); 1.0 = the estimate as is."""

    @property
    def corrected_tokens(self) -> int:
        """The estimate in the provider's tokens: what the budget was checked against."""
        return corrected(self.estimated_tokens, self.token_factor)


def split_into_turns(history: Sequence[Message]) -> list[tuple[Message, Message]]:
    """Group a flat history into (user, assistant) turns; anything else is a broken history."""
    if isinstance(history, WholeHistory):
        return [(history[index], history[index + 1]) for index in range(0, len(history), 2)]
    if len(history) % 2 != 0:
        raise ChatHistoryError(
            f"История должна состоять из законченных ходов, а в ней {messages_count(len(history))}."
        )
    turns: list[tuple[Message, Message]] = []
    for index in range(0, len(history), 2):
        user, assistant = history[index], history[index + 1]
        try:
            validate_turn(user, assistant, index // 2 + 1)
        except BrokenHistoryError as error:
            raise ChatHistoryError(str(error)) from None
        turns.append((user, assistant))
    return turns


def largest_fitting(budget: int, factor: float) -> int:
    """The largest estimate whose corrected value still fits `budget` (see `token_calibration`)."""
    if factor == 1.0:
        return budget
    estimate = math.floor(budget / factor)
    while corrected(estimate + 1, factor) <= budget:  # float rounding, both ways
        estimate += 1
    while estimate > 0 and corrected(estimate, factor) > budget:
        estimate -= 1
    return estimate


class SlidingWindowHistory:
    """Keeps the newest whole turns that fit into `input_token_budget` tokens."""

    def __init__(self, token_counter: TokenCounter, input_token_budget: int) -> None:
        if isinstance(input_token_budget, bool) or not isinstance(input_token_budget, int):
            raise TypeError("Бюджет входных токенов должен быть целым числом.")
        if input_token_budget <= 0:
            raise ValueError("Бюджет входных токенов должен быть больше нуля.")
        self._token_counter = token_counter
        self._input_token_budget = input_token_budget
        # Running token totals in a WholeHistory are per counting rule: class + encoding.
        counter_type = type(token_counter)
        self._totals_key = f"{counter_type.__module__}.{counter_type.__qualname__}/{token_counter.encoding_name}"

    @property
    def input_token_budget(self) -> int:
        return self._input_token_budget

    @property
    def token_counter(self) -> TokenCounter:
        return self._token_counter

    def with_budget(self, input_token_budget: int) -> SlidingWindowHistory:
        """The same policy with another budget (for "what if the budget were smaller?")."""
        return SlidingWindowHistory(self._token_counter, input_token_budget)

    def prepare(
        self,
        developer_message: Message,
        history: Sequence[Message],
        user_message: Message,
        context_messages: Sequence[Message] | None = None,
        *,
        token_factor: float = 1.0,
    ) -> PreparedHistory:
        """`token_factor` converts the estimate to the provider's tokens before it meets the budget."""
        if not token_factor > 0:
            raise ChatHistoryError("Поправка токенов должна быть больше нуля.")
        turns = [] if isinstance(history, WholeHistory) else split_into_turns(history)
        fixed_context = list(context_messages or [])
        count = self._token_counter.count_message

        required_tokens = REPLY_PRIMER_TOKENS + sum(
            count(message) for message in (developer_message, *fixed_context, user_message)
        )
        if corrected(required_tokens, token_factor) > self._input_token_budget:
            raise ChatHistoryError(
                "Developer-инструкция, сводка и новое сообщение не помещаются во входной бюджет: "
                f"нужно {tokens(corrected(required_tokens, token_factor))}, бюджет {self._input_token_budget}."
            )

        room = largest_fitting(self._input_token_budget, token_factor) - required_tokens
        if isinstance(history, WholeHistory):
            # Whole by construction, with running totals per tokenizer: a binary search, no walk.
            totals = history.turn_totals(self._totals_key, lambda user, assistant: count(user) + count(assistant))
            kept_turns = history.newest_turns_within(room, totals)
            used_tokens = required_tokens + totals[history.turns] - totals[history.turns - kept_turns]
        else:
            used_tokens = required_tokens
            kept_turns = 0
            for user, assistant in reversed(turns):
                turn_tokens = count(user) + count(assistant)
                if used_tokens + turn_tokens > required_tokens + room:
                    break  # older turns are not considered: the window has no gaps
                used_tokens += turn_tokens
                kept_turns += 1

        kept_messages = 2 * kept_turns
        selected_history = list(history[len(history) - kept_messages :])
        return PreparedHistory(
            messages=[developer_message, *fixed_context, *selected_history, user_message],
            estimated_tokens=used_tokens,
            context_history_messages=kept_messages,
            removed_history_messages=len(history) - kept_messages,
            token_factor=token_factor,
        )
