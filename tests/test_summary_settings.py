"""The summary's own settings: a cheaper model, the 1.1.0 prompt's length cap and its priority."""

import pytest

from course_lib.app import build_chat_app
from course_lib.config import Settings, SettingsError, load_settings
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.llm.client import LLMClient
from course_lib.llm.offline.facts import Facts, extract_facts
from course_lib.llm.offline.summary import PRIORITY, compose_summary, length_cap
from course_lib.prompts.chat_history_summary import (
    get_chat_history_summary_prompt,
    list_chat_history_summary_versions,
)
from course_lib.tokenizer import TokenCounter

FULL_CASE = Facts(
    order_number="7718",
    product="монитор",
    problem="трещина на подставке",
    damaged_part="подставка",
    checks=("проверены две розетки",),
    customer_name="Анна",
    preferences=("связь по электронной почте",),
)

FRAGMENT = [
    {"role": "user", "content": "<customer_message>\nМеня зовут Анна. Заказ 7718, монитор.\n</customer_message>"},
    {"role": "assistant", "content": "Что случилось?"},
    {"role": "user", "content": "<customer_message>\nНа подставке трещина.\n</customer_message>"},
    {"role": "assistant", "content": "Понимаю."},
]


def test_summary_model_defaults_to_the_chat_model(offline_settings):
    assert offline_settings.summary_model is None
    assert offline_settings.effective_summary_model == "gpt-4.1"
    cheaper = offline_settings.model_copy(update={"summary_model": "gpt-4.1-mini"})
    assert cheaper.effective_summary_model == "gpt-4.1-mini"


def test_blank_summary_model_in_env_means_the_chat_model(offline_settings, monkeypatch):
    monkeypatch.setenv("SUMMARY_MODEL", "  ")
    assert Settings(_env_file=None).effective_summary_model == "gpt-4.1"


@pytest.mark.parametrize(
    ("variable", "value"),
    [("SUMMARY_MAX_CHARS", "0"), ("CHAT_KEEP_RECENT_TURNS", "-1"), ("CHAT_SESSION_TTL_SECONDS", "0")],
)
def test_bad_summary_settings_fail_at_start_naming_the_variable(offline_settings, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None)
    assert variable in str(caught.value)


def test_the_summary_request_names_the_summary_model_and_the_chat_request_does_not(make_settings):
    app = build_chat_app(make_settings(summary_model="gpt-4.1-mini", chat_input_token_budget=300))
    model = app.llm_client.offline_model
    for text in (
        "Меня зовут Анна. Заказ 7718, монитор, на подставке трещина.",
        "Коробка не вскрыта, хочу обменять монитор, пишите на e-mail.",
        "Подставка треснула при распаковке, фото могу прислать сегодня вечером.",
        "Скажите, сколько займёт обмен и нужно ли везти монитор в пункт выдачи?",
        "Напомните номер заказа.",
    ):
        reply = app.chat_service.reply("s", text)
    assert reply.summary_updated or app.chat_service.get_session("s").summary is not None
    named = [request["model"] for request in model.requests]
    assert "gpt-4.1-mini" in named
    assert named.count("gpt-4.1-mini") == sum(
        1 for request in model.requests if "<conversation_fragment>" in request["messages"][-1]["content"]
    )
    assert set(named) == {"gpt-4.1", "gpt-4.1-mini"}


def test_both_prompt_versions_are_kept_and_1_1_0_states_its_cap():
    assert list_chat_history_summary_versions() == ("1.0.0", "1.1.0", "1.2.0")
    old, new = get_chat_history_summary_prompt("1.0.0"), get_chat_history_summary_prompt("1.1.0")
    assert old.required_variables == frozenset()
    assert new.required_variables == {"max_summary_chars"}
    assert length_cap(new.render(max_summary_chars=240)) == 240
    assert length_cap(old.render()) is None


def test_1_2_0_is_1_1_0_in_the_glossary_s_words_and_is_active():
    # Issue 30: «сводка», not «резюме»; «сообщения», not «реплики». The rules are 1.1.0's, the cap keeps
    # «не длиннее N символов» (the offline model reads it) and the instruction keeps its size in tokens,
    # so the stored runs of notebooks 06 and 10 stay what the code gives.
    from course_lib.prompts.chat_history_summary import CHAT_HISTORY_SUMMARY_PROMPT
    from course_lib.tokenizer import TokenCounter

    old, new = get_chat_history_summary_prompt("1.1.0"), get_chat_history_summary_prompt("1.2.0")
    assert CHAT_HISTORY_SUMMARY_PROMPT is new and new.required_variables == old.required_variables
    text = new.render(max_summary_chars=600)
    assert "резюме" not in text.lower() and "реплик" not in text and "сводк" in text
    assert length_cap(text) == 600
    rules = [line for line in old.body.splitlines() if "резюме" not in line.lower() and "реплик" not in line]
    assert all(line in new.body.splitlines() for line in rules)
    counter = TokenCounter()
    assert counter.count_text(text) == counter.count_text(old.render(max_summary_chars=600))


def test_the_service_renders_its_cap_into_the_instruction(offline_settings):
    client = LLMClient(offline_settings)
    assert "не длиннее 150 символов" in ConversationSummaryService(client, max_summary_chars=150).instruction
    plain = ConversationSummaryService(client, prompt=get_chat_history_summary_prompt("1.0.0"))
    assert "символов" not in plain.instruction


@pytest.mark.parametrize("cap", [0, -3, True, "600"])
def test_bad_caps_are_refused(offline_settings, cap):
    with pytest.raises((TypeError, ValueError)):
        ConversationSummaryService(LLMClient(offline_settings), max_summary_chars=cap)


def test_without_a_cap_every_fact_is_kept_and_reads_back():
    assert extract_facts(compose_summary(FULL_CASE)) == FULL_CASE


@pytest.mark.parametrize("cap", [20, 60, 100, 140, 180, 600])
def test_the_cap_keeps_facts_by_the_stated_priority(cap):
    summary = compose_summary(FULL_CASE, max_chars=cap)
    kept = extract_facts(summary)
    # The first sentence is always kept; every other one only within the cap.
    assert kept.order_number == "7718"
    assert len(summary) <= cap or summary == compose_summary(FULL_CASE, max_chars=1)
    present = [key for key in PRIORITY if _has(kept, key)]
    expected_order = [key for key in PRIORITY if _has(FULL_CASE, key)]
    # No gaps: what survives is a prefix of the priority list.
    assert present == expected_order[: len(present)]


def test_a_larger_cap_never_keeps_fewer_facts():
    counts = [len(extract_facts(compose_summary(FULL_CASE, max_chars=cap)).known_fields()) for cap in range(10, 400, 10)]
    assert counts == sorted(counts)
    assert counts[0] < counts[-1]


def test_the_offline_model_obeys_the_cap_from_the_prompt(offline_settings):
    client = LLMClient(offline_settings)
    wide = ConversationSummaryService(client, max_summary_chars=600).summarize(None, FRAGMENT)
    narrow = ConversationSummaryService(client, max_summary_chars=40).summarize(None, FRAGMENT)
    assert "Анна" in wide and "Анна" not in narrow
    assert "7718" in narrow
    assert len(narrow) <= 40


def _has(facts: Facts, key: str) -> bool:
    from course_lib.llm.offline import lexicon as lx
    from course_lib.llm.offline.facts import CHECK_KEYS

    done = [c for c in facts.checks if CHECK_KEYS.get(c) not in lx.STATE_CHECK_KEYS]
    states = [c for c in facts.checks if CHECK_KEYS.get(c) in lx.STATE_CHECK_KEYS]
    return bool(
        {
            "case": facts.order_number or facts.product,
            "problem": facts.problem or facts.damaged_part,
            "open_question": facts.open_question,
            "checks": done,
            "states": states,
            "name": facts.customer_name,
            "preferences": facts.preferences,
            "rule_change": facts.rule_change_requested,
            # A customer's earlier orders and contacts come from the ledger, not from `Facts`:
            # a single case has neither (tests/test_offline_ledger.py checks them under a cap).
            "orders": False,
            "contacts": False,
        }[key]
    )


def test_token_counter_for_model_falls_back_for_unknown_names():
    assert TokenCounter.for_model("gpt-4.1").encoding_name == "o200k_base"
    assert TokenCounter.for_model("gpt-4").encoding_name == "cl100k_base"
    assert TokenCounter.for_model("qwen2.5:7b").encoding_name == "o200k_base"
    assert TokenCounter.for_model("qwen2.5:7b", fallback="cl100k_base").encoding_name == "cl100k_base"


def test_model_prices_extend_the_defaults_and_reach_the_reply(offline_settings, monkeypatch):
    monkeypatch.setenv("MODEL_PRICES", '{"qwen2.5:7b": [0.1, 0.05, 0.2]}')
    monkeypatch.setenv("OPENAI_MODEL", "qwen2.5:7b")
    settings = load_settings(_env_file=None, llm_backend="offline")
    assert settings.price_table["qwen2.5:7b"].output == 0.2 and "gpt-4.1" in settings.price_table
    reply = build_chat_app(settings).chat_service.reply("s", "Привет")
    assert reply.cost_usd == pytest.approx((reply.prompt_tokens * 0.1 + reply.completion_tokens * 0.2) / 1e6)


@pytest.mark.parametrize("value", ['{"m": [1, 2]}', '{"m": [-1, 0, 1]}', "не json"])
def test_bad_model_prices_fail_at_start(offline_settings, monkeypatch, value):
    monkeypatch.setenv("MODEL_PRICES", value)
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None)
    assert "MODEL_PRICES" in str(caught.value)
