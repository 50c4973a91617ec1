"""Notebook 06: the strategy comparison with the student's `trim_by_message_count` and `rolling_compress`.

`build_strategies()` and `compare_strategies()` in `course_lib.strategies` always use the course's
own functions (the `bench strategies` command prints the course's figures). Notebook 06 runs the
same six strategies with whatever `your_code(...)` returned for the two exercises, so a student's
function is what trims "the last N messages" and folds "summary + K messages" in its table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from course_lib.strategies import (
    STRATEGY_NAMES,
    MessageCountStrategy,
    RollingSummaryStrategy,
    StrategySettings,
    build_strategy,
    run_strategy,
)
from course_lib.strategies.base import MemoryStrategy
from course_lib.strategies.metering import GeneratingClient
from course_lib.strategies.runner import Comparison
from course_lib.strategies.script import ScriptedDialogue
from course_lib.tokenizer import TokenCounter


def build_with_functions(
    name: str,
    llm_client: GeneratingClient,
    settings: StrategySettings,
    *,
    trim: Callable | None = None,
    compress: Callable | None = None,
    token_counter: TokenCounter | None = None,
) -> MemoryStrategy:
    """`build_strategy(name, ...)`, with `trim` in "count" and `compress` in "rolling" (None = the course's)."""
    counter = token_counter or TokenCounter()
    if name == "count":
        return MessageCountStrategy(llm_client, settings.max_messages, trim=trim)
    if name == "rolling":
        return RollingSummaryStrategy(
            llm_client, counter, settings.input_token_budget, settings.keep_recent, compress=compress
        )
    return build_strategy(name, llm_client, settings, token_counter=counter)


def compare_with_functions(
    dialogue: ScriptedDialogue,
    llm_client: GeneratingClient,
    settings: StrategySettings | None = None,
    *,
    trim: Callable | None = None,
    compress: Callable | None = None,
    token_counter: TokenCounter | None = None,
    names: Iterable[str] = STRATEGY_NAMES,
    turns: int | None = None,
) -> Comparison:
    """`compare_strategies(...)` with the student's functions in the two strategies that use them."""
    settings = settings or StrategySettings()
    names = tuple(names)
    if "full" not in names:
        raise ValueError("Сравнение строится относительно полной истории: добавьте стратегию 'full'.")
    counter = token_counter or TokenCounter()
    runs = tuple(
        run_strategy(
            build_with_functions(name, llm_client, settings, trim=trim, compress=compress, token_counter=counter),
            dialogue,
            turns=turns,
        )
        for name in names
    )
    return Comparison(dialogue, settings, runs[0].turns, runs)
