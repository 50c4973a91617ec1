"""Notebook 06 runs "the last N messages" and "summary + K messages" with the student's functions:
with the course's versions of the exercises the figures are the library's own, to the token; a
wrong function shows up instead of being hidden."""

from __future__ import annotations

import pytest

from course_lib.config import load_settings
from course_lib.course_versions.rolling_compress import rolling_compress
from course_lib.course_versions.trim_by_message_count import trim_by_message_count
from course_lib.steps.comparing import compare_with_functions
from course_lib.strategies import (
    OfflineDirectClient,
    RollingSummaryStrategy,
    StrategyError,
    StrategySettings,
    compare_strategies,
    load_long_dialogue,
)
from course_lib.tokenizer import TokenCounter

TURNS = 40
SETTINGS = StrategySettings(input_token_budget=400, max_messages=6, keep_recent=4, keep_recent_turns=2)


@pytest.fixture(scope="module")
def dialogue():
    return load_long_dialogue()


def fresh_client():
    return OfflineDirectClient.from_settings(load_settings())


def test_the_exercise_versions_give_the_librarys_figures(dialogue):
    library = compare_strategies(dialogue, fresh_client(), SETTINGS, turns=TURNS)
    yours = compare_with_functions(
        dialogue, fresh_client(), SETTINGS, turns=TURNS, trim=trim_by_message_count, compress=rolling_compress
    )
    for ours, theirs in zip(library.runs, yours.runs):
        assert ours.name == theirs.name
        assert [r.request for r in ours.records] == [r.request for r in theirs.records], ours.name
        assert ours.total_input_tokens == theirs.total_input_tokens
    assert yours.run("rolling").compressions > 3


@pytest.mark.parametrize("mark_summary", [True, False])
def test_rolling_compress_reproduces_the_strategys_own_fold_and_its_pitfall(dialogue, mark_summary):
    runs = []
    for compress in (None, rolling_compress):
        strategy = RollingSummaryStrategy(
            fresh_client(), TokenCounter(), 400, 4, mark_summary=mark_summary, compress=compress
        )
        for turn in dialogue.turns[:TURNS]:
            strategy.reply(turn.text)
        runs.append((strategy.compressions, strategy.resummarized, strategy.stored_messages()))
    assert runs[0] == runs[1]
    assert runs[0][1] == (0 if mark_summary else runs[0][0] - 1)


def test_a_compress_that_builds_another_text_is_an_error_not_a_silent_fallback(dialogue):
    def sloppy(messages, summarize, keep):  # forgets the previous summary in the text
        dialogue_part = [m for m in messages if not m.get("is_summary")]
        text = "\n".join(f"{m['role']}: {m['content']}" for m in dialogue_part[: len(dialogue_part) - keep])
        return [{"role": "user", "content": summarize(text), "is_summary": True}, *dialogue_part[-keep:]]

    strategy = RollingSummaryStrategy(fresh_client(), TokenCounter(), 400, 4, compress=sloppy)
    with pytest.raises(StrategyError, match="rolling_compress"):
        for turn in dialogue.turns[:TURNS]:
            strategy.reply(turn.text)
    assert strategy.compressions == 1  # the first fold had no previous summary and was right


def test_a_trim_that_loses_the_instruction_shows_in_the_requests(dialogue):
    def loses_instruction(messages, max_messages):
        return list(messages[-max_messages:])

    run = compare_with_functions(
        dialogue, fresh_client(), SETTINGS, turns=12, trim=loses_instruction, names=("full", "count")
    ).run("count")
    assert run.records[0].request[0]["role"] == "developer"  # short history: nothing trimmed yet
    assert run.records[-1].request[0]["role"] != "developer"
