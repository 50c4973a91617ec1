"""Running strategies through the scripted dialogue and collecting their figures.

For every turn: the prompt tokens of the chat request, the summary calls and their tokens, the
application's own time. At every recall question and for every fact it asks about: was the fact in
the request (`present`), and did the reply state it (`answered`)?
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate

from course_lib.pricing import Price
from course_lib.strategies.base import MemoryStrategy, TurnRecord
from course_lib.strategies.catalog import STRATEGY_NAMES, StrategySettings, build_strategies
from course_lib.strategies.metering import GeneratingClient
from course_lib.strategies.script import ScriptedDialogue
from course_lib.tokenizer import TokenCounter

TARGET_SHARE = 0.25
"""Window + summary must keep every control fact at no more than this share of full history's input."""


@dataclass(frozen=True)
class RecallCheck:
    turn: int
    fact_id: str
    present: bool
    """The fact was stated somewhere in the request (not counting the instruction)."""
    answered: bool
    """The reply to the recall question stated the fact."""


@dataclass(frozen=True)
class StrategyRun:
    name: str
    title: str
    records: tuple[TurnRecord, ...]
    recalls: tuple[RecallCheck, ...]

    @property
    def turns(self) -> int:
        return len(self.records)

    @property
    def prompt_tokens(self) -> tuple[int, ...]:
        """Prompt tokens of each turn's chat request."""
        return tuple(record.prompt_tokens for record in self.records)

    @property
    def input_tokens(self) -> tuple[int, ...]:
        """Each turn's input tokens: the chat request plus any summary request."""
        return tuple(record.input_tokens for record in self.records)

    @property
    def cumulative_input_tokens(self) -> tuple[int, ...]:
        return tuple(accumulate(self.input_tokens))

    @property
    def total_prompt_tokens(self) -> int:
        return sum(self.prompt_tokens)

    @property
    def total_summary_prompt_tokens(self) -> int:
        return sum(record.summary_prompt_tokens for record in self.records)

    @property
    def total_input_tokens(self) -> int:
        return self.total_prompt_tokens + self.total_summary_prompt_tokens

    @property
    def max_prompt_tokens(self) -> int:
        return max(self.prompt_tokens, default=0)

    @property
    def chat_calls(self) -> int:
        return len(self.records)

    @property
    def summary_calls(self) -> int:
        return sum(record.summary_calls for record in self.records)

    @property
    def model_calls(self) -> int:
        return self.chat_calls + self.summary_calls

    @property
    def facts_present(self) -> int:
        return sum(check.present for check in self.recalls)

    @property
    def facts_answered(self) -> int:
        return sum(check.answered for check in self.recalls)

    @property
    def kept_every_fact(self) -> bool:
        return all(check.present and check.answered for check in self.recalls)

    @property
    def compression_turns(self) -> tuple[int, ...]:
        """The turns on which the strategy called the summarizer."""
        return tuple(record.turn for record in self.records if record.summary_calls)

    @property
    def compressions(self) -> int:
        """Turns with a compression (one summary call each, unless a summary had to be redone)."""
        return len(self.compression_turns)

    @property
    def compressions_with_previous_reply(self) -> int:
        """Compression turns whose chat request still held the assistant's previous reply verbatim.

        That reply is what a short answer ("Да.", "8041.") refers to; with K = 0 it is folded into
        the summary on a compression turn, with K > 0 it stays.
        """
        return sum(
            1
            for record in self.records
            if record.summary_calls and record.turn > 1
            and any(message["role"] == "assistant" for message in record.request)
        )

    def cost(self, price: Price, *, with_cache: bool = True) -> float:
        """USD for the whole run (summary calls included), with or without prompt caching."""
        return sum(record.cost(price, with_cache=with_cache) for record in self.records)

    @property
    def cached_tokens(self) -> int:
        return sum(record.cached_tokens + record.summary_cached_tokens for record in self.records)

    @property
    def prepare_seconds(self) -> float:
        return sum(record.prepare_seconds for record in self.records)

    def recalls_at(self, turn: int) -> tuple[RecallCheck, ...]:
        return tuple(check for check in self.recalls if check.turn == turn)


def run_strategy(
    strategy: MemoryStrategy,
    dialogue: ScriptedDialogue,
    *,
    turns: int | None = None,
    on_turn: Callable[[TurnRecord], None] | None = None,
) -> StrategyRun:
    """Feed the first `turns` customer messages to a fresh strategy and check every recall."""
    limit = len(dialogue.turns) if turns is None else turns
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= len(dialogue.turns):
        raise ValueError(f"Число ходов должно быть от 1 до {len(dialogue.turns)}.")
    records: list[TurnRecord] = []
    recalls: list[RecallCheck] = []
    for scripted in dialogue.turns[:limit]:
        record = strategy.reply(scripted.text)
        records.append(record)
        for fact_id in scripted.asks:
            fact = dialogue.fact(fact_id)
            recalls.append(
                RecallCheck(
                    turn=scripted.turn,
                    fact_id=fact_id,
                    present=fact.present_in(record.request),
                    answered=fact.found_in(record.reply_text),
                )
            )
        if on_turn is not None:
            on_turn(record)
    return StrategyRun(strategy.name, strategy.title, tuple(records), tuple(recalls))


@dataclass(frozen=True)
class Comparison:
    dialogue: ScriptedDialogue
    settings: StrategySettings
    turns: int
    runs: tuple[StrategyRun, ...]

    def run(self, name: str) -> StrategyRun:
        for run in self.runs:
            if run.name == name:
                return run
        raise KeyError(name)

    @property
    def baseline(self) -> StrategyRun:
        """Full history: the figure every ratio is taken against."""
        return self.run("full")

    def share_of_full(self, run: StrategyRun) -> float:
        """The run's total input tokens (chat + summary) as a share of full history's."""
        return run.total_input_tokens / self.baseline.total_input_tokens

    def meets_target(self, name: str) -> bool:
        """The strategy keeps every control fact at ≤ `TARGET_SHARE` of full history's input tokens."""
        run = self.run(name)
        return run.kept_every_fact and self.share_of_full(run) <= TARGET_SHARE

    @property
    def target_met(self) -> bool:
        """Window + summary (K = 0) keeps every control fact at ≤ 1/4 of full history's input tokens."""
        return self.meets_target("window_summary")


def compare_strategies(
    dialogue: ScriptedDialogue,
    llm_client: GeneratingClient,
    settings: StrategySettings | None = None,
    *,
    turns: int | None = None,
    token_counter: TokenCounter | None = None,
    names: Iterable[str] = STRATEGY_NAMES,
) -> Comparison:
    """Run each strategy (fresh, on the same client) through the same dialogue."""
    settings = settings or StrategySettings()
    names = tuple(names)
    if "full" not in names:
        raise ValueError("Сравнение строится относительно полной истории: добавьте стратегию 'full'.")
    strategies = build_strategies(llm_client, settings, token_counter=token_counter, names=names)
    runs = tuple(run_strategy(strategy, dialogue, turns=turns) for strategy in strategies)
    return Comparison(dialogue, settings, runs[0].turns, runs)
