"""The offline model's record of a customer across a request (`llm.offline.ledger`): the three rules
the memory benchmark's losses follow from, the questions it reads, and what its summaries keep."""

from __future__ import annotations

import pytest

from course_lib.llm.offline import OfflineModel
from course_lib.llm.offline.facts import extract_facts
from course_lib.llm.offline.ledger import (
    CustomerRecord,
    Ledger,
    answer_memory_question,
    canonical_phone,
    customer_part,
    read_ledger,
    read_memory_question,
    summary_mentions,
    text_mentions,
)
from course_lib.llm.offline.summary import compose_summary
from course_lib.prompts.chat_history_summary import CHAT_HISTORY_SUMMARY_PROMPT


def customer(text: str) -> dict:
    return {"role": "user", "content": f"<customer_message>\n{text}\n</customer_message>"}


REQUEST = [
    {"role": "developer", "content": "Правила поддержки."},
    customer("Меня зовут Ольга. Заказ 7718: монитор, на подставке трещина. Мой телефон 8 (912) 345-67-89."),
    {"role": "assistant", "content": "Записал ваш телефон +7 999 111-22-33."},  # the assistant's words never count
    customer("Я живу в Казани. У меня заказ 8041 — кофемашина. Она не включается."),
    customer("Поправка: живу не в Казани, а в Самаре. Новый телефон +7 922 000-11-22, почта Olga@Mail.ru"),
]


def ask(question: str, request=REQUEST) -> str:
    parsed = read_memory_question(question)
    assert parsed is not None, question
    return answer_memory_question(parsed, read_ledger(request))


def test_newest_wins():
    assert ask("Какой у меня сейчас номер телефона?") == "Ваш номер телефона: +7 922 000-11-22."
    assert ask("В каком городе я живу?") == "Ваш город: Самара."  # «не в Казани, а в Самаре»
    assert ask("Напомните, пожалуйста, мой e-mail?") == "Ваш адрес почты: olga@mail.ru."


def test_a_list_is_every_value_in_request_order():
    assert ask("Какие товары я у вас заказывала?") == "Вы заказывали: монитор, кофемашина."
    assert ask("Какие номера заказов я вам называла?") == "Номера ваших заказов: 7718, 8041."


def test_order_in_time_is_order_in_the_request():
    assert ask("Какой товар я заказала первым?") == "Первым вы заказали: монитор."
    assert ask("Какой товар я заказала последним?") == "Последним вы заказали: кофемашина."
    assert ask("Какой номер был у моего первого заказа?") == "Номер вашего первого заказа — 7718."
    # The first order lost from the request: the earliest one left is named, confidently and wrongly.
    assert ask("Какой товар я заказала первым?", [REQUEST[0], *REQUEST[3:]]) == "Первым вы заказали: кофемашина."


def test_an_order_and_its_product_are_paired_when_stated_together():
    assert ask("Что было в заказе 7718?") == "В заказе 7718 был товар: монитор."
    assert ask("Какой номер у заказа с кофемашиной?") == "Номер заказа с товаром «кофемашина» — 8041."


def test_what_the_request_lacks_is_not_seen_and_asked_for():
    reply = ask("Какой номер у заказа со стиральной машиной?")
    assert reply.startswith("Я не вижу номера заказа") and reply.endswith("?")
    assert "не вижу вашего города" in ask("В каком городе я живу?", REQUEST[:3])


def test_phones_in_any_format_are_one_number():
    assert canonical_phone("8 (912) 345-67-89") == canonical_phone("+79123456789") == "+7 912 345-67-89"


@pytest.mark.parametrize("text", ["Отвечайте, пожалуйста, по почте.", "Мой телефон не включается, что делать?",
                                  "Можно мне ответ по почте?", "Спасибо за помощь!"])
def test_ordinary_messages_are_not_memory_questions(text):
    assert read_memory_question(text) is None


def test_the_idiom_on_the_phone_is_not_a_product():
    assert [m.kind for m in text_mentions("Сегодня весь день на телефоне, столько дел.")] == []


def test_a_search_result_counts_only_the_customers_words():
    result = '{"results": [{"клиент": "Заказ 5512: чайник.", "поддержка": "Номер заказа 9999 записал."}]}'
    assert customer_part(result) == "Заказ 5512: чайник."
    ledger = read_ledger([{"role": "tool", "tool_call_id": "x", "content": result}])
    assert ledger.distinct("order") == ("5512",)


def test_memory_blocks_and_summaries_are_read_where_they_stand():
    memory = {"role": "user", "content": "<user_memory>\n- Телефон: +79120000001\n- Товар: чайник\n- Номер заказа: 5512\n</user_memory>"}
    request = [REQUEST[0], memory, customer("Новый телефон +7 912 000-00-02.")]
    assert ask("Какой у меня номер телефона?", request) == "Ваш номер телефона: +7 912 000-00-02."
    assert ask("Что было в заказе 5512?", request) == "В заказе 5512 был товар: чайник."


def test_a_summary_lists_every_order_oldest_first_and_reads_back():
    ledger = read_ledger(REQUEST)
    facts = extract_facts(" ".join(m["content"] for m in REQUEST if m["role"] == "user"))
    summary = compose_summary(facts, record=CustomerRecord.of(ledger))
    assert "Заказы по порядку: 7718 — монитор; 8041 — кофемашина." in summary
    assert "телефон +7 922 000-11-22" in summary and "olga@mail.ru" in summary and "живёт в Самаре" in summary
    again = Ledger(summary_mentions(summary))
    assert again.distinct("product")[0] == "монитор" and again.current("phone") == "+7 922 000-11-22"


def test_under_a_tight_cap_contacts_go_before_orders():
    ledger = read_ledger(REQUEST)
    facts = extract_facts(REQUEST[3]["content"])
    summary = compose_summary(facts, max_chars=90, record=CustomerRecord.of(ledger))
    assert "Заказы по порядку" in summary and "Контакты" not in summary


def test_the_offline_summarizer_keeps_the_record_across_summaries():
    model = OfflineModel()
    instruction = {"role": "developer", "content": CHAT_HISTORY_SUMMARY_PROMPT.render(max_summary_chars=600)}
    first = model.reply_text([instruction, {"role": "user", "content": (
        "<previous_summary>\nОтсутствует.\n</previous_summary>\n<conversation_fragment>\n"
        "Клиент: Заказ 7718: монитор. Мой телефон 8 912 345 67 89.\nПоддержка: Понял.\n</conversation_fragment>")}])
    second = model.reply_text([instruction, {"role": "user", "content": (
        f"<previous_summary>\n{first}\n</previous_summary>\n<conversation_fragment>\n"
        "Клиент: Заказ 8041: кофемашина.\nПоддержка: Понял.\n</conversation_fragment>")}])
    assert "Заказы по порядку: 7718 — монитор; 8041 — кофемашина." in second
    assert "+7 912 345-67-89" in second
