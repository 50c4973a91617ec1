"""`WholeHistory`: whole by construction, frozen, O(1) growth; the window gives the same answer as for a list."""

from __future__ import annotations

import copy
import json
import random

import pytest

from course_lib.chat_history import ChatHistoryError, SlidingWindowHistory, split_into_turns
from course_lib.tokenizer import TokenCounter
from course_lib.whole_history import BrokenHistoryError, WholeHistory

COUNTER = TokenCounter()
DEVELOPER = {"role": "developer", "content": "Ты помогаешь клиенту."}
USER = {"role": "user", "content": "Напомните номер заказа."}
WORDS = "заказ кофемашина монитор трещина розетка курьер упаковка чек фото возврат гарантия".split()


def random_history(rng: random.Random, turns: int) -> list[dict[str, str]]:
    history = []
    for _ in range(turns):
        history.append({"role": "user", "content": " ".join(rng.choices(WORDS, k=rng.randint(1, 40)))})
        history.append({"role": "assistant", "content": " ".join(rng.choices(WORDS, k=rng.randint(1, 40)))})
    return history


@pytest.mark.parametrize(
    "broken",
    [
        [{"role": "user", "content": "a"}],
        [{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}],
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": 5}],
        [{"role": "user", "content": "a"}, "ответ"],
    ],
)
def test_a_broken_history_is_refused_with_the_same_words_as_for_a_list(broken):
    with pytest.raises(BrokenHistoryError) as whole_error:
        WholeHistory(broken)
    with pytest.raises(ChatHistoryError) as list_error:
        split_into_turns(broken)
    assert str(whole_error.value) == str(list_error.value)


def test_messages_are_frozen_but_still_plain_dicts_for_everyone_else():
    history = WholeHistory(random_history(random.Random(1), 2))
    message = history[0]
    for change in (
        lambda: message.__setitem__("content", "x"),
        lambda: message.update(content="x"),
        lambda: message.pop("content"),
        lambda: message.clear(),
    ):
        with pytest.raises(TypeError):
            change()
    assert isinstance(message, dict) and json.loads(json.dumps(message)) == message
    plain = copy.deepcopy(message)
    plain["content"] = "копию менять можно"
    assert history[0]["content"] != plain["content"]


def test_growth_is_shared_for_the_newest_version_and_copied_for_an_older_one():
    base = WholeHistory()
    first = base.with_turn({"role": "user", "content": "1"}, {"role": "assistant", "content": "1"})
    second = first.with_turn({"role": "user", "content": "2"}, {"role": "assistant", "content": "2"})
    branch = first.with_turn({"role": "user", "content": "B"}, {"role": "assistant", "content": "B"})
    assert [m["content"] for m in second] == ["1", "1", "2", "2"]
    assert [m["content"] for m in branch] == ["1", "1", "B", "B"]
    assert len(first) == 2 and len(base) == 0
    with pytest.raises(BrokenHistoryError, match="Ход №2"):
        first.with_turn({"role": "assistant", "content": "x"}, {"role": "user", "content": "y"})
    assert second == [*first, {"role": "user", "content": "2"}, {"role": "assistant", "content": "2"}]


@pytest.mark.parametrize("factor", [1.0, 1.37, 2.6])
def test_the_window_over_a_whole_history_equals_the_window_over_a_list(factor):
    rng = random.Random(7)
    for _ in range(40):
        history = random_history(rng, rng.randint(0, 60))
        policy = SlidingWindowHistory(COUNTER, rng.randint(200, 3000))
        try:
            expected = policy.prepare(DEVELOPER, history, USER, token_factor=factor)
        except ChatHistoryError:
            with pytest.raises(ChatHistoryError):
                policy.prepare(DEVELOPER, WholeHistory(history), USER, token_factor=factor)
            continue
        whole = WholeHistory(history)
        assert policy.prepare(DEVELOPER, whole, USER, token_factor=factor) == expected
        # grown turn by turn, as a session grows, the running totals stay right
        grown = WholeHistory()
        for index in range(0, len(history), 2):
            grown = grown.with_turn(history[index], history[index + 1])
            prefix = history[: index + 2]
            assert policy.prepare(DEVELOPER, grown, USER, token_factor=factor) == policy.prepare(
                DEVELOPER, prefix, USER, token_factor=factor
            )
