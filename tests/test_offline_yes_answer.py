"""The offline model reads a bare «Да» / «Нет» against the assistant message right before it.

Like "8041." after "номер заказа?", a short answer is understood only when the question it answers
is in the request. Notebook 05 relies on this to show what K = keep_recent_turns fixes: right after
a compression with K = 0 the question is gone and "Да" answers nothing the model can see.
"""

from __future__ import annotations

import openai
import pytest

from course_lib.llm.offline import OFFLINE_BASE_URL, OfflineModel, OfflineTransport
from course_lib.llm.offline import intents
from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.dialogue import interpret_yes_no
from course_lib.llm.offline.replies import PICKUP_OFFER
from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
from course_lib.prompts.tags import wrap_in_tag

SUPPORT = {"role": "developer", "content": SUPPORT_CHAT_PROMPT.render()}
COURIER_QUESTION = "Прислать курьера, чтобы он забрал монитор?"
RETURN_QUESTION = "Хотите, чтобы мы оформили возврат?"
UNCLEAR = "Уточните, пожалуйста, что вы имеете в виду?"


@pytest.fixture
def client() -> openai.OpenAI:
    return openai.OpenAI(
        api_key="offline-teaching-model",
        base_url=OFFLINE_BASE_URL,
        max_retries=0,
        http_client=openai.DefaultHttpxClient(transport=OfflineTransport(OfflineModel())),
    )


def customer(text: str) -> dict[str, str]:
    return {"role": "user", "content": wrap_in_tag("customer_message", text)}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def summary(text: str) -> dict[str, str]:
    return {"role": "user", "content": wrap_in_tag("conversation_summary", text)}


def ask(client: openai.OpenAI, messages) -> str:
    response = client.chat.completions.create(model="gpt-4.1", messages=messages)
    return response.choices[0].message.content


QUESTION_TURN = [
    customer("Монитор тяжёлый, сам отвезти его в пункт выдачи не смогу."),
    assistant(COURIER_QUESTION),
]
SUMMARY = summary("Заказ 7718, товар: монитор. Проблема: трещина на подставке.")


# --- the answer with and without its question ----------------------------------------------------


def test_yes_right_after_the_question_confirms_it(client):
    reply = ask(client, [SUPPORT, SUMMARY, *QUESTION_TURN, customer("Да")])
    assert reply == f"Вы ответили «да» на вопрос «{COURIER_QUESTION}» — договорились."


def test_no_right_after_the_question_is_understood_too(client):
    reply = ask(client, [SUPPORT, customer("Подставка треснула."), assistant(RETURN_QUESTION), customer("Нет.")])
    assert reply == f"Вы ответили «нет» на вопрос «{RETURN_QUESTION}» — хорошо, не будем."


def test_yes_after_a_compression_without_the_question_is_not_understood(client):
    # The seed-000 request after a compression: instruction + summary + new message.
    reply = ask(client, [SUPPORT, SUMMARY, customer("Да")])
    assert "не вижу вопроса" in reply and reply.endswith(UNCLEAR)
    assert "курьер" not in reply


def test_yes_in_a_stateless_request_is_not_understood(client):
    reply = ask(client, [SUPPORT, customer("Да")])
    assert reply == f"Вы ответили «да», но я не вижу вопроса, на который это ответ. {UNCLEAR}"


def test_only_the_assistant_message_right_before_counts(client):
    # The question is in the request, but an answer and another question came after it.
    messages = [
        SUPPORT,
        *QUESTION_TURN,
        customer("Подождите, сначала другое."),
        assistant("Подскажите, пожалуйста, номер заказа?"),
        customer("Да"),
    ]
    assert ask(client, messages).endswith(UNCLEAR)


def test_a_question_that_is_not_yes_no_does_not_make_yes_an_answer(client):
    messages = [SUPPORT, customer("Монитор сломан."), assistant("Что вы уже успели проверить?"), customer("Да")]
    assert ask(client, messages).endswith(UNCLEAR)


def test_the_bare_number_logic_is_unchanged(client):
    messages = [SUPPORT, customer("Кофемашина не включается."), assistant("Подскажите, пожалуйста, номер заказа?")]
    assert "номер заказа 8041" in ask(client, [*messages, customer("8041.")])


# --- the pieces -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Да", "yes"),
        ("да.", "yes"),
        ("Да, конечно!", "yes"),
        ("Да, давайте", "yes"),
        ("Нет", "no"),
        ("Нет, спасибо.", "no"),
        ("Нет, не надо", "no"),
        ("Да, заказ 7718.", None),  # states a fact: not a bare answer
        ("Даже не знаю", None),
        ("Нетбук сломан", None),
        ("", None),
    ],
)
def test_bare_yes_no(text, expected):
    assert intents.bare_yes_no(lx.normalize(text)) == expected


@pytest.mark.parametrize(
    "assistant_text, asks_yes_no",
    [
        (COURIER_QUESTION, True),
        (RETURN_QUESTION, True),
        ("Спасибо, учёл: коробка целая. Оформить обращение по заказу?", True),
        ("Подскажите, пожалуйста, номер заказа?", False),
        ("Что вы уже успели проверить?", False),
        ("Как вам удобнее получить ответ?", False),
        ("Прислать курьера можно в будний день.", False),  # a statement, not a question
    ],
)
def test_assistant_asks_yes_no(assistant_text, asks_yes_no):
    assert ("yes_no" in intents.assistant_asks(lx.normalize(assistant_text))) is asks_yes_no


def test_the_question_is_quoted_as_written():
    text = "Спасибо, учёл: коробка целая. Прислать курьера, чтобы он забрал монитор?"
    assert intents.yes_no_question(text) == COURIER_QUESTION
    assert interpret_yes_no("Да", text) == ("yes", COURIER_QUESTION)
    assert interpret_yes_no("Да", "Подскажите, пожалуйста, номер заказа?") == ("yes", None)
    assert interpret_yes_no("Монитор сломан", text) == (None, None)


def test_a_customer_who_cannot_bring_the_item_is_offered_a_courier(client):
    history = [customer("У меня заказ 7718 с монитором. Подставка пришла с трещиной."), assistant("Понял.")]
    reply = ask(client, [SUPPORT, *history, customer("Сам отвезти монитор в пункт выдачи не смогу.")])
    assert reply.endswith(PICKUP_OFFER.format(acc="монитор"))
    assert "yes_no" in intents.assistant_asks(lx.normalize(reply))


def test_other_can_not_sentences_are_no_pickup():
    assert not intents.needs_pickup(lx.normalize("В воскресенье ответить быстро я не смогу."))
    assert not intents.needs_pickup(lx.normalize("Вчера мне привезли микроволновку."))
    assert intents.needs_pickup(lx.normalize("Не смогу сам довезти его до пункта выдачи."))
