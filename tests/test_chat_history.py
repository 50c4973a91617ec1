import importlib.util
import random
from pathlib import Path

import pytest

from course_lib.chat_history import (
    ChatHistoryError,
    SlidingWindowHistory,
    TokenCounter,
    split_into_turns,
)

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_prepare.py"
_spec = importlib.util.spec_from_file_location("bench_prepare", BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

DEVELOPER = {"role": "developer", "content": "Ты помогаешь клиенту в чате службы поддержки."}
USER = {"role": "user", "content": "Напомните номер заказа."}


def turn(i: int, words: int = 5) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"Вопрос {i}: " + "слово " * words},
        {"role": "assistant", "content": f"Ответ {i}."},
    ]


def history_of(n: int, words: int = 5) -> list[dict[str, str]]:
    return [message for i in range(n) for message in turn(i, words)]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def test_everything_fits_with_a_large_budget(counter):
    history = history_of(3)
    prepared = SlidingWindowHistory(counter, 6000).prepare(DEVELOPER, history, USER)
    assert prepared.messages == [DEVELOPER, *history, USER]
    assert prepared.context_history_messages == 6
    assert prepared.removed_history_messages == 0
    assert prepared.estimated_tokens == counter.count_messages(prepared.messages)


def test_window_keeps_newest_whole_turns_and_stops_at_first_misfit(counter):
    history = history_of(5)
    required = counter.count_messages([DEVELOPER, USER])
    per_turn = counter.count_messages(turn(4)) - 3
    budget = required + 2 * per_turn + 1  # room for two turns, not three
    prepared = SlidingWindowHistory(counter, budget).prepare(DEVELOPER, history, USER)
    assert prepared.messages == [DEVELOPER, *history[-4:], USER]
    assert (prepared.context_history_messages, prepared.removed_history_messages) == (4, 6)
    assert prepared.estimated_tokens <= budget


def test_no_gaps_an_old_short_turn_is_not_taken_after_a_misfit(counter):
    history = turn(0, words=1) + turn(1, words=300) + turn(2, words=1)
    required = counter.count_messages([DEVELOPER, USER])
    budget = required + (counter.count_messages(turn(2, 1)) - 3) + (counter.count_messages(turn(0, 1)) - 3)
    prepared = SlidingWindowHistory(counter, budget).prepare(DEVELOPER, history, USER)
    assert prepared.messages == [DEVELOPER, *turn(2, words=1), USER]
    assert prepared.removed_history_messages == 4


def test_context_messages_are_required_and_placed_before_history(counter):
    summary = {"role": "user", "content": "<conversation_summary>\nЗаказ 7718.\n</conversation_summary>"}
    history = history_of(2)
    prepared = SlidingWindowHistory(counter, 6000).prepare(DEVELOPER, history, USER, [summary])
    assert prepared.messages == [DEVELOPER, summary, *history, USER]
    tight = counter.count_messages([DEVELOPER, summary, USER]) - 1
    with pytest.raises(ChatHistoryError, match="не помещаются"):
        SlidingWindowHistory(counter, tight).prepare(DEVELOPER, history, USER, [summary])


def test_required_part_checked_first_even_with_empty_history(counter):
    with pytest.raises(ChatHistoryError, match="бюджет 5"):
        SlidingWindowHistory(counter, 5).prepare(DEVELOPER, [], USER)


@pytest.mark.parametrize(
    "history",
    [
        [{"role": "user", "content": "a"}],
        [{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}],
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        [{"role": "user", "content": "a"}, {"role": "developer", "content": "b"}],
        [{"role": "user", "content": "a"}, "not a message"],
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": None}],
    ],
)
def test_broken_history_is_rejected(counter, history):
    with pytest.raises(ChatHistoryError):
        SlidingWindowHistory(counter, 6000).prepare(DEVELOPER, history, USER)


def test_inputs_are_not_mutated(counter):
    history = history_of(4)
    snapshot = [dict(m) for m in history]
    SlidingWindowHistory(counter, 120).prepare(DEVELOPER, history, USER)
    assert history == snapshot


@pytest.mark.parametrize("budget", [0, -1])
def test_budget_must_be_positive(counter, budget):
    with pytest.raises(ValueError, match="больше нуля"):
        SlidingWindowHistory(counter, budget)


@pytest.mark.parametrize("budget", [True, 10.5, "300"])
def test_budget_must_be_an_int(counter, budget):
    with pytest.raises(TypeError):
        SlidingWindowHistory(counter, budget)


def test_split_into_turns_pairs_messages():
    history = history_of(2)
    assert split_into_turns(history) == [tuple(history[0:2]), tuple(history[2:4])]
    assert split_into_turns([]) == []


def test_same_result_as_the_seeds_recounting_version(counter):
    """Counting once must not change what is selected: compare with a faithful copy of the seed."""
    rng = random.Random(7)
    seed_counter = bench.SeedTokenCounter()
    for _ in range(60):
        history = [m for i in range(rng.randint(0, 12)) for m in turn(i, rng.randint(0, 40))]
        budget = rng.randint(40, 900)
        ours = SlidingWindowHistory(counter, budget)
        try:
            prepared = ours.prepare(DEVELOPER, history, USER)
        except ChatHistoryError:
            with pytest.raises(RuntimeError):
                bench.seed_prepare(seed_counter, budget, DEVELOPER, history, USER)
            continue
        messages, tokens, kept = bench.seed_prepare(seed_counter, budget, DEVELOPER, history, USER)
        assert prepared.messages == messages
        assert prepared.estimated_tokens == tokens
        assert prepared.context_history_messages == kept


def test_each_message_is_counted_once_per_call(counter, monkeypatch):
    calls: list[str] = []
    fresh = TokenCounter(cache_size=0)  # no cache: count real tokenizations
    original = fresh._count_uncached
    monkeypatch.setattr(fresh, "_count_uncached", lambda text: calls.append(text) or original(text))
    import functools

    fresh._count_cached = functools.lru_cache(maxsize=0)(fresh._count_uncached)
    history = history_of(200)
    SlidingWindowHistory(fresh, 10**9).prepare(DEVELOPER, history, USER)
    contents = [c for c in calls if c not in {"user", "assistant", "developer"}]
    assert len(contents) == len(history) + 2  # every message once: no re-counting per turn
