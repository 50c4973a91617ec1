"""Memory strategies (notebook 06): what each keeps, what it costs, and the comparison's figures.

Everything is asserted on metrics — message counts, roles, tokens, calls, facts found in requests
and replies by the dialogue's evidence patterns — never on a reply's wording.
"""

from __future__ import annotations

import json
import re

import pytest

from course_lib.bench import main as bench_main
from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService
from course_lib.llm.client import LLMClient
from course_lib.llm.offline import OfflineModel
from course_lib.llm.offline.facts import extract_facts
from course_lib.scenarios import COFFEE_DIALOGUE, MONITOR_DIALOGUE, MONITOR_RECALL
from course_lib.strategies import (
    STRATEGY_NAMES,
    SUMMARY_FLAG,
    TARGET_SHARE,
    DialogueScriptError,
    FullHistoryStrategy,
    MemoryStrategy,
    MessageCountStrategy,
    OfflineDirectClient,
    RollingSummaryStrategy,
    StrategyError,
    StrategySettings,
    TokenWindowStrategy,
    WindowSummaryStrategy,
    build_strategy,
    compare_strategies,
    load_long_dialogue,
    run_strategy,
    trim_by_message_count,
)
from course_lib.strategies.report import (
    NBSP,
    THIN_NBSP,
    Table,
    format_int,
    format_report,
    format_share,
    recall_rows,
    summary_rows,
    target_verdict,
)
from course_lib.tokenizer import TokenCounter

COUNTER = TokenCounter()
FILLER = "Спасибо, поняла, подожду ответа специалиста."


@pytest.fixture(scope="module")
def dialogue():
    return load_long_dialogue()


@pytest.fixture(scope="module")
def comparison(dialogue):
    """The notebook's comparison: 200 turns, default settings, offline model."""
    return compare_strategies(dialogue, OfflineDirectClient(), StrategySettings())


def client() -> OfflineDirectClient:
    return OfflineDirectClient(OfflineModel())


def feed(strategy: MemoryStrategy, texts: list[str]) -> list:
    return [strategy.reply(text) for text in texts]


def roles(messages) -> list[str]:
    return [message["role"] for message in messages]


def summary_requests(strategy) -> list[str]:
    """The data part (last user message) of every summary call the strategy made."""
    return [call.messages[-1]["content"] for call in strategy.calls if call.purpose == "summary"]


# --- the scripted dialogue -----------------------------------------------------------------------


def test_dialogue_has_200_turns_six_facts_and_recalls_after_them(dialogue):
    assert len(dialogue.turns) >= 200
    assert {fact.id for fact in dialogue.facts} == {"name", "product", "order", "damage", "checks", "preference"}
    for fact in dialogue.facts:
        planted = dialogue.turns[fact.turn - 1]
        assert planted.plants == (fact.id,)
        assert fact.found_in(planted.text)
    asked = {fact_id for turn in dialogue.recall_turns for fact_id in turn.asks}
    assert asked == {fact.id for fact in dialogue.facts}
    assert dialogue.recall_turns[-1].turn == 200 and len(dialogue.recall_turns[-1].asks) == 6
    assert dialogue.recall_checks() == 14


def test_no_other_turn_states_a_control_fact(dialogue):
    """Only the planting turns carry facts: otherwise a window could "keep" a fact by luck."""
    for turn in dialogue.turns:
        if turn.plants:
            continue
        assert not [fact.id for fact in dialogue.facts if fact.found_in(turn.text)], turn.turn
        stated = extract_facts(turn.text)  # what the offline model would read from it
        assert [name for name in stated.known_fields() if name != "open_question"] == [], turn.turn


def test_messages_vary_in_length(dialogue):
    lengths = [COUNTER.count_text(turn.text) for turn in dialogue.turns]
    assert min(lengths) <= 5
    assert max(lengths) >= 200
    assert sum(1 for n in lengths if 25 <= n < 100) >= 10


def test_loader_rejects_broken_files(tmp_path):
    path = tmp_path / "bad.json"
    good = json.loads(_data_text())

    gap = {**good, "turns": [t for t in good["turns"] if t["turn"] != 7]}
    path.write_text(json.dumps(gap, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DialogueScriptError, match="подряд"):
        load_long_dialogue(path)

    early = json.loads(_data_text())
    early["turns"][1]["asks"] = ["order"]  # turn 2 asks for the order number stated in turn 3
    path.write_text(json.dumps(early, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DialogueScriptError, match="раньше"):
        load_long_dialogue(path)

    path.write_text("{}", encoding="utf-8")
    with pytest.raises(DialogueScriptError):
        load_long_dialogue(path)


def _data_text() -> str:
    from importlib import resources

    return resources.files("course_lib").joinpath("data", "long_dialogue.json").read_text(encoding="utf-8")


# --- message-count trimming ----------------------------------------------------------------------


def _messages(*pairs: tuple[str, str]) -> list[dict]:
    return [{"role": role, "content": content} for role, content in pairs]


def test_trim_keeps_the_instruction_and_the_last_messages_from_a_user_message():
    messages = _messages(
        ("system", "S"), ("user", "u1"), ("assistant", "a1"), ("user", "u2"), ("assistant", "a2"), ("user", "u3")
    )
    before = json.dumps(messages)
    assert trim_by_message_count(messages, 4) == _messages(("system", "S"), ("user", "u2"), ("assistant", "a2"), ("user", "u3"))
    assert trim_by_message_count(messages, 3) == _messages(("system", "S"), ("user", "u2"), ("assistant", "a2"), ("user", "u3"))
    assert trim_by_message_count(messages, 0) == _messages(("system", "S"))
    assert trim_by_message_count(messages, 10) == messages
    assert json.dumps(messages) == before  # input untouched
    developer_first = [{"role": "developer", "content": "D"}, *messages[1:]]
    assert roles(trim_by_message_count(developer_first, 1)) == ["developer", "user"]


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (True, TypeError), ("2", TypeError)])
def test_trim_rejects_bad_counts(bad, error):
    with pytest.raises(error):
        trim_by_message_count([], bad)


# --- what each strategy keeps ----------------------------------------------------------------------


def test_full_history_sends_everything():
    strategy = FullHistoryStrategy(client())
    records = feed(strategy, list(COFFEE_DIALOGUE))
    for number, record in enumerate(records, start=1):
        assert len(record.request) == 2 * number  # developer + 2(n-1) history + new message
        assert record.request[0]["role"] == "developer"
    assert len(strategy.stored_messages()) == 2 * len(COFFEE_DIALOGUE)
    assert "8041" in records[-1].request[1]["content"]


def test_message_count_keeps_n_messages_and_forgets_the_rest_for_good():
    strategy = MessageCountStrategy(client(), max_messages=4)
    records = feed(strategy, list(MONITOR_DIALOGUE))
    for record in records:
        assert roles(record.request)[:2] == ["developer", "user"]
        assert len(record.request) <= 1 + 4
    last = records[-1].request
    assert roles(last) == ["developer", "user", "assistant", "user"]  # a window of 4 would start with a reply
    assert len(strategy.stored_messages()) <= 4
    assert not any("7718" in m["content"] for m in strategy.stored_messages())


def test_message_count_ignores_length():
    """Two messages are two messages, whatever their size: the request follows the text."""
    strategy = MessageCountStrategy(client(), max_messages=2)
    short = strategy.reply("Хорошо, подожду.")
    long = strategy.reply("Я подробно опишу, как всё было. " * 60)
    assert len(long.request) == len(short.request) == 2
    assert long.prompt_tokens - short.prompt_tokens > 500


def test_token_window_stays_in_budget_and_stores_everything():
    budget = 250
    strategy = TokenWindowStrategy(client(), SlidingWindowHistory(COUNTER, budget))
    records = feed(strategy, [*MONITOR_DIALOGUE, MONITOR_RECALL])
    assert all(record.prompt_tokens <= budget for record in records)
    assert len(strategy.stored_messages()) == 2 * len(records)
    assert len(records[-1].request) < 2 * len(records)  # something was left out
    assert "7718" not in " ".join(m["content"] for m in records[-1].request)


def test_token_window_refuses_a_message_larger_than_the_budget():
    strategy = TokenWindowStrategy(client(), SlidingWindowHistory(COUNTER, 200))
    with pytest.raises(StrategyError, match="бюджет"):
        strategy.reply("Очень длинное сообщение. " * 100)
    assert strategy.stored_messages() == ()


def test_rolling_summary_keeps_one_marked_summary_and_k_recent_messages():
    strategy = RollingSummaryStrategy(client(), COUNTER, input_token_budget=260, keep_recent=4)
    records = feed(strategy, [*MONITOR_DIALOGUE, *[FILLER] * 6, MONITOR_RECALL])
    assert strategy.compressions >= 2
    assert strategy.summary_messages == 1
    stored = strategy.stored_messages()
    assert stored[0][SUMMARY_FLAG] is True and stored[0]["role"] == "user"
    assert sum(1 for m in stored if m.get(SUMMARY_FLAG)) == 1

    compressed = [r for r in records if r.summary_calls]
    assert len(compressed) == strategy.compressions
    for record in compressed:
        # instruction, the summary as tagged user data, K recent messages, the new message
        assert roles(record.request) == ["developer", "user", "user", "assistant", "user", "assistant", "user"]
        assert record.request[1]["content"].startswith("<conversation_summary>")
        assert all(set(m) == {"role", "content"} for m in record.request)  # the marker is not sent
    # The previous summary reaches the summarizer as such, never as a customer's line.
    later = summary_requests(strategy)[1:]
    assert later and all("Отсутствует." not in text for text in later)
    assert all("Клиент: <conversation_summary>" not in text for text in later)
    assert strategy.resummarized == 0
    assert "7718" in records[-1].reply_text


def test_without_the_marker_the_summary_is_summarized_again_as_dialogue():
    """The retrospective's pitfall: an unmarked summary is folded as if the customer had said it."""
    strategy = RollingSummaryStrategy(
        client(), COUNTER, input_token_budget=260, keep_recent=4, mark_summary=False
    )
    feed(strategy, [*MONITOR_DIALOGUE, *[FILLER] * 6, MONITOR_RECALL])
    assert strategy.compressions >= 2
    assert strategy.summary_messages == 0  # nothing tells the summary from the dialogue
    assert strategy.resummarized == strategy.compressions - 1
    later = summary_requests(strategy)[1:]
    for text in later:
        previous = re.search(r"<previous_summary>\n(.*?)\n</previous_summary>", text, re.DOTALL).group(1)
        assert previous == "Отсутствует."  # the summarizer is told there is no summary...
        assert "Клиент: &lt;conversation_summary>" in text  # ...and reads one as a customer line


def test_the_unmarked_pitfall_loses_control_facts(dialogue):
    """Re-summarizing a summary as dialogue keeps the headline and drops the details."""
    kept = {}
    for mark in (True, False):
        strategy = RollingSummaryStrategy(
            client(), COUNTER, input_token_budget=400, keep_recent=4, mark_summary=mark
        )
        feed(strategy, [turn.text for turn in dialogue.turns[:40]])
        stored = " ".join(m["content"] for m in strategy.stored_messages())
        kept[mark] = {fact.id for fact in dialogue.facts if fact.found_in(stored)}
    assert kept[True] == {fact.id for fact in dialogue.facts}
    assert kept[False] == {"order", "product", "damage"}


def test_window_summary_is_chat_service():
    strategy = WindowSummaryStrategy(client(), SlidingWindowHistory(COUNTER, 300))
    assert isinstance(strategy.service, ChatService)
    records = feed(strategy, [*MONITOR_DIALOGUE, MONITOR_RECALL])
    assert sum(r.summary_calls for r in records) >= 1
    assert all(r.prompt_tokens <= 300 for r in records)
    stored = strategy.stored_messages()
    assert stored[0]["content"].startswith("<conversation_summary>")
    assert roles(stored[1:]) == ["user", "assistant"] * ((len(stored) - 1) // 2)
    assert "7718" in records[-1].reply_text


def _compression_records(strategy, texts):
    records = feed(strategy, texts)
    return records, [record for record in records if record.summary_calls]


@pytest.mark.parametrize("k", [1, 2])
def test_window_summary_with_k_keeps_k_turns_verbatim_on_a_compression(k):
    strategy = WindowSummaryStrategy(client(), SlidingWindowHistory(COUNTER, 400), keep_recent_turns=k)
    assert strategy.name == "window_summary_k" and strategy.keep_recent_turns == k
    assert strategy.service.keep_recent_turns == k
    records, compressed = _compression_records(strategy, [*MONITOR_DIALOGUE, *[FILLER] * 8, MONITOR_RECALL])
    assert compressed
    for record in compressed:
        assert roles(record.request) == ["developer", "user"] + ["user", "assistant"] * k + ["user"]
        assert record.request[1]["content"].startswith("<conversation_summary>")
        previous = records[record.turn - 2]
        assert record.request[-2] == {"role": "assistant", "content": previous.reply_text}
        assert record.prompt_tokens <= 400
    assert "7718" in records[-1].reply_text


def test_window_summary_with_k_zero_sends_no_turn_on_a_compression():
    """K = 0 is the seed-000 design: instruction + summary + new message."""
    strategy = WindowSummaryStrategy(client(), SlidingWindowHistory(COUNTER, 400))
    assert strategy.name == "window_summary" and strategy.keep_recent_turns == 0
    _, compressed = _compression_records(strategy, [*MONITOR_DIALOGUE, *[FILLER] * 8])
    assert compressed
    assert all(roles(record.request) == ["developer", "user", "user"] for record in compressed)


def test_window_summary_k_needs_at_least_one_turn():
    with pytest.raises(ValueError, match="K ≥ 1"):
        build_strategy("window_summary_k", client(), StrategySettings(keep_recent_turns=0))
    strategy = build_strategy("window_summary_k", client(), StrategySettings(keep_recent_turns=3))
    assert strategy.keep_recent_turns == 3 and strategy.title == "Окно + сводка + K ходов"


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_a_failed_call_changes_nothing(name):
    offline = OfflineModel()
    strategy = build_strategy(name, OfflineDirectClient(offline), StrategySettings(input_token_budget=300))
    feed(strategy, list(MONITOR_DIALOGUE[:3]))
    before = strategy.stored_messages()
    offline.schedule_fault("server_error")
    with pytest.raises(StrategyError):
        strategy.reply(MONITOR_DIALOGUE[3])
    assert strategy.stored_messages() == before
    offline.schedule_fault("empty")
    with pytest.raises(StrategyError):
        strategy.reply(MONITOR_DIALOGUE[3])
    assert strategy.stored_messages() == before


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_every_strategy_has_the_common_interface(name):
    strategy = build_strategy(name, client())
    assert isinstance(strategy, MemoryStrategy)
    record = strategy.reply(COFFEE_DIALOGUE[0])
    assert record.turn == 1 and record.model_calls == 1
    assert record.prompt_tokens == COUNTER.count_messages(record.request)
    assert record.prepare_seconds >= 0
    with pytest.raises(StrategyError):
        strategy.reply("   ")


def test_run_strategy_checks_the_turn_count(dialogue):
    for bad in (0, len(dialogue.turns) + 1, True):
        with pytest.raises(ValueError):
            run_strategy(FullHistoryStrategy(client()), dialogue, turns=bad)
    run = run_strategy(FullHistoryStrategy(client()), dialogue, turns=15)
    assert run.turns == 15 and [(c.turn, c.fact_id) for c in run.recalls] == [(15, "preference")]


def test_summary_calls_are_counted_separately():
    strategy = WindowSummaryStrategy(client(), SlidingWindowHistory(COUNTER, 300))
    records = feed(strategy, list(MONITOR_DIALOGUE))
    calls = strategy.calls
    assert sum(1 for c in calls if c.purpose == "chat") == len(records)
    assert sum(1 for c in calls if c.purpose == "summary") == sum(r.summary_calls for r in records)
    for record in records:
        assert record.input_tokens == record.prompt_tokens + record.summary_prompt_tokens


def test_the_direct_client_answers_exactly_like_llm_client(offline_settings):
    messages = [
        {"role": "developer", "content": "Отвечай кратко."},
        {"role": "user", "content": ChatService.build_user_message(COFFEE_DIALOGUE[0])["content"]},
    ]
    with LLMClient(offline_settings) as sdk_client:
        through_sdk = sdk_client.generate(messages)
    assert OfflineDirectClient.from_settings(offline_settings).generate(messages) == through_sdk


def test_the_direct_client_reports_cached_tokens_like_llm_client(offline_settings):
    long = [{"role": "developer", "content": "Отвечай кратко."}]
    long += [{"role": "user", "content": f"<customer_message>{FILLER} {i}</customer_message>"} for i in range(120)]
    direct = OfflineDirectClient.from_settings(offline_settings)
    with LLMClient(offline_settings) as sdk_client:
        results = [(sdk_client.generate(long), direct.generate(long)) for _ in range(2)]
    assert [sdk == mine for sdk, mine in results] == [True, True]
    assert results[1][1].cached_tokens and results[1][1].cached_tokens > 0  # the second, identical request


# --- the comparison (200 turns) ----------------------------------------------------------------------


def test_full_history_keeps_every_fact_and_grows_every_turn(comparison):
    full = comparison.baseline
    assert full.turns == 200
    assert full.facts_present == full.facts_answered == 14
    assert all(later > earlier for earlier, later in zip(full.prompt_tokens, full.prompt_tokens[1:]))
    assert full.summary_calls == 0 and full.model_calls == 200


def test_window_summary_meets_the_target(comparison):
    best = comparison.run("window_summary")
    assert best.kept_every_fact
    assert comparison.share_of_full(best) <= TARGET_SHARE
    assert comparison.target_met
    assert best.max_prompt_tokens <= comparison.settings.input_token_budget
    assert best.model_calls == 200 + best.summary_calls and best.summary_calls > 0
    assert "выполнена" in target_verdict(comparison) and "НЕ" not in target_verdict(comparison)


def test_rolling_summary_keeps_every_fact_too(comparison):
    rolling = comparison.run("rolling")
    assert rolling.kept_every_fact
    assert comparison.share_of_full(rolling) <= TARGET_SHARE
    assert rolling.summary_calls > 0


@pytest.mark.parametrize("name", ["count", "window"])
def test_trimming_strategies_keep_only_the_recent_preference(comparison, name):
    run = comparison.run(name)
    assert run.summary_calls == 0
    assert [(c.turn, c.fact_id) for c in run.recalls if c.present and c.answered] == [(15, "preference")]
    assert run.facts_present == run.facts_answered == 1
    assert comparison.share_of_full(run) <= TARGET_SHARE  # cheap, but forgetful


def test_only_the_token_bounded_strategies_respect_the_budget(comparison):
    budget = comparison.settings.input_token_budget
    assert comparison.run("window").max_prompt_tokens <= budget
    assert comparison.run("count").max_prompt_tokens > budget  # N messages can be any size
    assert comparison.baseline.max_prompt_tokens > 10 * budget


def test_k_turns_cost_more_and_keep_the_previous_reply(comparison):
    k0, k = comparison.run("window_summary"), comparison.run("window_summary_k")
    assert comparison.settings.keep_recent_turns == 2
    assert k.kept_every_fact and comparison.meets_target("window_summary_k")
    assert k.max_prompt_tokens <= comparison.settings.input_token_budget
    # the benefit: on every compression turn the previous reply is still in the request ...
    assert k0.compressions_with_previous_reply == 0
    assert k.compressions_with_previous_reply == k.compressions > 0
    # ... the cost: more compressions, larger requests, more input tokens in total
    assert k.summary_calls > k0.summary_calls
    assert sum(k.prompt_tokens) > sum(k0.prompt_tokens)
    assert k.total_input_tokens > k0.total_input_tokens


def test_k_messages_and_k_half_turns_coincide_until_recent_messages_are_long(comparison, dialogue):
    """Notebook 06 states both: the same figures at the default budget, apart at a tight one."""
    rolling, k = comparison.run("rolling"), comparison.run("window_summary_k")
    assert comparison.settings.keep_recent == 2 * comparison.settings.keep_recent_turns
    assert rolling.compression_turns == k.compression_turns
    assert rolling.prompt_tokens == k.prompt_tokens and rolling.total_input_tokens == k.total_input_tokens
    tight = StrategySettings(input_token_budget=600)
    runs = {name: run_strategy(build_strategy(name, OfflineDirectClient(), tight), dialogue) for name in ("rolling", "window_summary_k")}
    assert runs["rolling"].max_prompt_tokens > 600  # K messages can be long
    assert runs["window_summary_k"].max_prompt_tokens <= 600  # K turns are taken from the window


def test_cumulative_tokens_add_up(comparison):
    for run in comparison.runs:
        cumulative = run.cumulative_input_tokens
        assert cumulative[-1] == run.total_input_tokens
        assert all(later > earlier for earlier, later in zip(cumulative, cumulative[1:]))


def test_report_tables(comparison):
    rows = summary_rows(comparison)
    assert [row[0] for row in rows[1:]] == [run.title for run in comparison.runs]
    assert [row[0] for row in rows[1:]][-1] == "Окно + сводка + K ходов"
    assert rows[1][6] == f"100,0{NBSP}%"
    assert len(recall_rows(comparison)) == 1 + len(comparison.runs)
    report = format_report(comparison)
    assert "Полная история" in report and "Цель:" in report
    assert report.count("Цель:") == 2  # K = 0 and K turns


def test_numbers_never_break():
    assert format_int(1161425) == f"1{THIN_NBSP}161{THIN_NBSP}425"
    assert format_share(0.1126) == f"11,3{NBSP}%"
    table = Table([["Стратегия", "Всего", "Доля"], ["Окно", format_int(130957), format_share(0.113)]])
    html = table._repr_html_()
    assert html.count("white-space: nowrap") == 2  # the two figure cells, not the headers
    assert "<th" in html and "&lt;" not in html
    assert repr(table).splitlines()[0].startswith("Стратегия")
    assert Table([["Факт", "Ход"], ["имя", "1"]], numeric=[1]).__repr__().splitlines()[2] == "имя     1"
    with pytest.raises(ValueError):
        Table([["a", "b"], ["c"]])


# --- the command -------------------------------------------------------------------------------------


def test_bench_command_prints_ratios_against_full_history(capsys):
    assert bench_main(["strategies", "--turns", "30", "--budget", "600"]) == 0
    out = capsys.readouterr().out
    assert "Ходов: 30" in out
    assert f"100,0{NBSP}%" in out
    assert all(title in out for title in ("Полная история", "Окно по токенам", "Окно + сводка", "Окно + сводка + K ходов"))
    assert "K = 2" in out


def test_bench_command_takes_k_turns(capsys):
    assert bench_main(["strategies", "--turns", "30", "--budget", "600", "--keep-turns", "1"]) == 0
    out = capsys.readouterr().out
    assert "«Окно + сводка + K ходов» K = 1" in out
    with pytest.raises(SystemExit):
        bench_main(["strategies", "--keep-turns", "0"])


def test_bench_command_rejects_bad_arguments(capsys):
    assert bench_main(["strategies", "--turns", "500"]) == 2
    with pytest.raises(SystemExit):
        bench_main(["strategies", "--budget", "0"])
    assert bench_main(["strategies", "--turns", "3", "--budget", "100"]) == 1  # the instruction alone does not fit
    assert "бюджет" in capsys.readouterr().err
    assert bench_main([]) == 2


def test_cost_with_and_without_prompt_caching():
    from course_lib.pricing import DEFAULT_PRICES
    from course_lib.strategies import OfflineDirectClient, StrategySettings, compare_strategies, load_long_dialogue
    from course_lib.strategies.report import cost_rows

    price = DEFAULT_PRICES["gpt-4.1"]
    dialogue = load_long_dialogue()
    small = compare_strategies(dialogue, OfflineDirectClient(), StrategySettings(), turns=120)
    large = compare_strategies(dialogue, OfflineDirectClient(), StrategySettings(input_token_budget=4000), turns=120)
    full = small.run("full")
    assert full.cost(price, with_cache=True) < 0.5 * full.cost(price, with_cache=False)
    # Requests under 1,024 tokens are never cached: at a 1,000-token budget no trimmed strategy is.
    assert all(run.cached_tokens == 0 for run in small.runs if run.name != "full")
    # At 4,000 tokens instruction + summary + recent turns keeps a stable prefix between compressions,
    # while the token window shifts its prefix whenever it drops a turn.
    summary, window = large.run("window_summary"), large.run("window")
    saved = lambda run: 1 - run.cost(price) / run.cost(price, with_cache=False)  # noqa: E731
    assert saved(summary) > saved(window) + 0.2
    assert summary.cost(price) < large.run("full").cost(price)
    rows = cost_rows(large, price)
    assert rows[0][:3] == ["Стратегия", "Без кэша", "С кэшем"] and len(rows) == 1 + len(large.runs)
