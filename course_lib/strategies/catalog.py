"""The six strategies of the comparison, built with one set of knobs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from course_lib.chat_history import SlidingWindowHistory
from course_lib.conversation_summary_service import DEFAULT_MAX_SUMMARY_CHARS
from course_lib.strategies.base import MemoryStrategy
from course_lib.strategies.full_history import FullHistoryStrategy
from course_lib.strategies.message_count import MessageCountStrategy
from course_lib.strategies.metering import GeneratingClient
from course_lib.strategies.rolling_summary import RollingSummaryStrategy
from course_lib.strategies.token_window import TokenWindowStrategy
from course_lib.strategies.window_summary import WindowSummaryStrategy
from course_lib.tokenizer import TokenCounter

STRATEGY_NAMES = ("full", "count", "window", "rolling", "window_summary", "window_summary_k")
"""No limit, count, tokens, summary + K messages, summary by tokens (K = 0), the same with K turns."""


@dataclass(frozen=True)
class StrategySettings:
    """The knobs of the comparison.

    `input_token_budget` bounds the token window and triggers every summary; `max_messages` is
    the message-count trim's N (the new message included); `keep_recent` is the rolling summary's K
    (messages); `keep_recent_turns` is `ChatService`'s K for `window_summary_k` (whole turns;
    `window_summary` always has K = 0).
    """

    input_token_budget: int = 1000
    max_messages: int = 24
    keep_recent: int = 4
    keep_recent_turns: int = 2
    max_summary_chars: int = DEFAULT_MAX_SUMMARY_CHARS
    """The summary prompt's length cap (notebook 05): under it, the prompt's priority decides what stays."""


def build_strategy(
    name: str,
    llm_client: GeneratingClient,
    settings: StrategySettings | None = None,
    *,
    token_counter: TokenCounter | None = None,
) -> MemoryStrategy:
    """A fresh strategy (no history) by its name from `STRATEGY_NAMES`."""
    settings = settings or StrategySettings()
    counter = token_counter or TokenCounter()
    if name == "full":
        return FullHistoryStrategy(llm_client)
    if name == "count":
        return MessageCountStrategy(llm_client, settings.max_messages)
    if name == "window":
        return TokenWindowStrategy(llm_client, SlidingWindowHistory(counter, settings.input_token_budget))
    if name == "rolling":
        return RollingSummaryStrategy(llm_client, counter, settings.input_token_budget, settings.keep_recent,
                                      max_summary_chars=settings.max_summary_chars)  # fmt: skip
    if name == "window_summary":
        return WindowSummaryStrategy(llm_client, SlidingWindowHistory(counter, settings.input_token_budget),
                                     max_summary_chars=settings.max_summary_chars)  # fmt: skip
    if name == "window_summary_k":
        if settings.keep_recent_turns < 1:
            raise ValueError("Для window_summary_k нужно K ≥ 1 ход (K = 0 — это window_summary).")
        return WindowSummaryStrategy(
            llm_client,
            SlidingWindowHistory(counter, settings.input_token_budget),
            keep_recent_turns=settings.keep_recent_turns,
            max_summary_chars=settings.max_summary_chars,
        )
    raise ValueError(f"Неизвестная стратегия {name!r}. Доступны: {', '.join(STRATEGY_NAMES)}.")


def build_strategies(
    llm_client: GeneratingClient,
    settings: StrategySettings | None = None,
    *,
    token_counter: TokenCounter | None = None,
    names: Iterable[str] = STRATEGY_NAMES,
) -> list[MemoryStrategy]:
    counter = token_counter or TokenCounter()
    return [build_strategy(name, llm_client, settings, token_counter=counter) for name in names]
