"""Notebook 06: the strategy comparison with the student's `trim_by_message_count`, `rolling_compress`
and `strategy_row`.

`build_strategies()` and `compare_strategies()` in `course_lib.strategies` always use the course's
own functions (the `bench strategies` command prints the course's figures). Notebook 06 runs the
same six strategies with whatever `your_code(...)` returned for the two exercises, so a student's
function is what trims "the last N messages" and folds "summary + K messages" in its table.

The table's figures of each strategy — its chat tokens, its largest request, the facts its last
request still states and the turn each other fact was lost — are measured by the exercise
`strategy_row` from the requests the strategy sent: `measure_runs(..., row=your_code("strategy_row"))`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from course_lib.course_versions.strategy_row import strategy_row as course_row
from course_lib.russian import facts_count
from course_lib.strategies import (
    STRATEGY_NAMES,
    MessageCountStrategy,
    RollingSummaryStrategy,
    StrategySettings,
    build_strategy,
    run_strategy,
)
from course_lib.strategies.base import MemoryStrategy, TurnRecord
from course_lib.strategies.report import format_int
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


# --- the table's rows: the exercise `strategy_row` ----------------------------------------------------

Row = Callable[[list, dict, Callable[[str], int]], dict]
"""`strategy_row(requests, facts, count_tokens) -> dict`: the course's version or the student's."""

PLAIN_MARKERS = {
    "checks": ["фото повреждения уже сделал", "фото повреждения сделан"],
    "preference": ["электронной почт"],
}
"""Markers for the facts whose evidence in the dialogue is a regular expression: the words the
dialogue states them in (the customer's «уже сделала», the summary's «сделано»). A test checks that
these markers find each fact in exactly the requests its evidence does."""


def fact_markers(dialogue: ScriptedDialogue) -> dict[str, list[str]]:
    """{fact's label: markers} as `strategy_row` takes them: plain substrings, any letter case."""
    markers = {}
    for fact in dialogue.facts:
        plain = [p.pattern for p in fact.evidence if re.escape(p.pattern) == p.pattern]
        markers[fact.label] = PLAIN_MARKERS.get(fact.id) or plain
    return markers


def requests_of(records: Sequence[TurnRecord]) -> list[list[dict]]:
    """Each turn's chat request as plain messages: the requests a strategy sent, one per turn."""
    return [[{"role": m["role"], "content": m["content"]} for m in record.request] for record in records]


def measure_records(records: Sequence[TurnRecord], dialogue: ScriptedDialogue, count_tokens: Callable[[str], int],
                    *, row: Row = course_row) -> dict:
    """One strategy's row, as `row` measures it from the requests of these turns."""
    return row(requests_of(records), fact_markers(dialogue), count_tokens)


def measure_runs(
    comparison: Comparison, count_tokens: Callable[[str], int], *, row: Row = course_row
) -> dict[str, dict]:
    """{strategy's name: its row} for every run of the comparison, each measured by `row`."""
    dialogue = comparison.dialogue
    return {run.name: measure_records(run.records, dialogue, count_tokens, row=row) for run in comparison.runs}


def describe_row(facts: int) -> Callable[[dict], str]:
    """How notebook 06 shows a row `strategy_row` returned: in the table's words."""

    def describe(row: dict) -> str:
        lost = ", ".join(f"{name} — ход {turn}" for name, turn in row["lost_at"].items()) or "нет"
        return (
            f"токенов чата {format_int(row['total_tokens'])}, самый большой запрос {format_int(row['peak_tokens'])} "
            f"(ход {row['peak_turn']}), последний {format_int(row['last_tokens'])}; в последнем запросе "
            f"{facts_count(len(row['facts_kept']))} из {facts}; пропали: {lost}"
        )

    return describe
