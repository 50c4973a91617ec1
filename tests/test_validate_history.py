"""Notebook 02's exercise `validate_history`: the stored history is checked before every request (issue 29).

- the course's version names the message (from 1) and what is wrong with it, in Russian, and only reads;
- `SingleHistoryChatService.reply()` (`course_lib.steps.single_history`, the class notebook 02 shows)
  runs the exercise through `your_code` on its history before it builds a request: a broken history
  is refused with `ChatServiceError`, nothing reaches the model and the history stays as it was;
- a student's function that lets a half-saved turn through is shown under notebook 02's demo
  (`show_mistake`), beside the course's refusal, while the chat keeps the course's version.
"""

from __future__ import annotations

import copy

import pytest

from course_lib.course_versions.validate_history import validate_history
from course_lib.llm.client import LLMClient
from course_lib.steps import single_history
from course_lib.steps.common import ChatServiceError
from course_lib.steps.single_history import SingleHistoryChatService
from course_lib.your_code import COURSE, YOURS, your_code
from student_course import course_copy, fix_mistake, with_mistake


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


COFFEE = [user("Кофемашина не включается."), assistant("Подскажите, пожалуйста, номер заказа."),
          user("8041."), assistant("Спасибо, номер заказа 8041 получил.")]  # fmt: skip

REFUSALS = [
    (COFFEE[:3], ValueError, "Сообщение №3: ход сохранён наполовину"),
    ([COFFEE[0], COFFEE[2], COFFEE[1], COFFEE[3]], ValueError, 'Сообщение №2: ожидалась роль "assistant", а пришла "user".'),
    ([COFFEE[1], COFFEE[0]], ValueError, 'Сообщение №1: ожидалась роль "user", а пришла "assistant".'),
    ([{"role": "developer", "content": "Правила"}, *COFFEE[:2]], ValueError, 'Сообщение №1: роль "developer" в истории не хранится'),
    ([*COFFEE[:2], {"role": "system", "content": "Правила"}], ValueError, 'Сообщение №3: роль "system" в истории не хранится'),
    ([*COFFEE[:3], {"role": "tool", "content": "{}"}], ValueError, "Сообщение №4: неизвестная роль 'tool'"),
    ([COFFEE[0], assistant("  \n")], ValueError, "Сообщение №2: пустой текст."),
    ([COFFEE[0], {**COFFEE[1], "name": "bot"}], ValueError, "Сообщение №2: нужны ровно ключи role и content (лишний ключ 'name')."),
    ([{"content": "Где заказ?"}], ValueError, "Сообщение №1: нужны ровно ключи role и content (нет ключа role)."),
    ([COFFEE[0], {"role": "assistant", "content": 8041}], TypeError, "Сообщение №2: content должен быть строкой, а не int."),
    ([COFFEE[0], "Спасибо."], TypeError, "Сообщение №2: ожидался словарь, а пришёл str."),
    (tuple(COFFEE), TypeError, "История должна быть списком, а не tuple."),
]  # fmt: skip


@pytest.mark.parametrize(("history", "error", "message"), REFUSALS, ids=[m for _, _, m in REFUSALS])
def test_the_course_version_names_the_message_and_what_is_wrong(history, error, message):
    before = copy.deepcopy(history)
    with pytest.raises(error) as raised:
        validate_history(history)
    assert type(raised.value) is error and str(raised.value).startswith(message)
    assert history == before


def test_a_whole_history_gives_its_turns_and_is_left_as_it_was():
    padded = [user("  Кофемашина не включается.\n"), assistant(" Номер заказа? ")]
    before = copy.deepcopy(padded)
    assert validate_history(padded) == 1 and padded == before
    assert validate_history(COFFEE) == 2 and validate_history([]) == 0
    assert type(validate_history(COFFEE[:2])) is int


# --- the service of notebook 02 ------------------------------------------------------------------

@pytest.fixture()
def client(offline_settings):
    return LLMClient(offline_settings)


def test_the_service_refuses_a_broken_history_and_sends_nothing(client):
    service = SingleHistoryChatService(client)
    service._history.extend(copy.deepcopy(COFFEE[:3]))  # a half-saved turn, as an early commit leaves it
    before, calls = copy.deepcopy(service._history), client.offline_model.calls
    with pytest.raises(ChatServiceError) as raised:
        service.reply("8041.")
    assert str(raised.value).startswith("История повреждена, запрос не отправлен. Сообщение №3: ход сохранён наполовину")
    assert raised.value.__suppress_context__
    assert client.offline_model.calls == calls and service._history == before


def test_the_service_checks_its_history_with_the_exercise_before_the_request(client, monkeypatch):
    seen: list[list[dict[str, str]]] = []

    def spy(history):
        seen.append(copy.deepcopy(history))
        assert client.offline_model.calls == len(seen) - 1  # called before the model
        return validate_history(history)

    monkeypatch.setattr(single_history, "validate_history", spy)
    service = SingleHistoryChatService(client)
    service.reply("Кофемашина не включается.")
    service.reply("8041.")
    assert [len(history) for history in seen] == [0, 2]


def test_the_steps_module_takes_the_exercise_through_your_code(client):
    assert single_history.validate_history.__name__ == "validate_history"  # on_each_call("validate_history")
    stand_in = your_code("validate_history", announce=False)
    before = sum(stand_in.calls.values())
    SingleHistoryChatService(client).reply("Кофемашина не включается.")
    assert sum(stand_in.calls.values()) == before + 1


# --- a student's function in a course folder of its own ------------------------------------------

def test_a_function_that_lets_a_half_saved_turn_through_is_shown_beside_the_course_refusal(tmp_path):
    course = course_copy(tmp_path)
    code, lines = with_mistake(course, "validate_history", '    if expected != "user":\n        raise', '    if False:\n        raise')
    assert code.implementation == COURSE and "не проходит открытые тесты" in lines[-1]
    with pytest.raises(ValueError, match="наполовину"):  # the chat keeps refusing: the course's version runs
        code(COFFEE[:3])
    shown: list[str] = []
    describe = lambda turns: f"вернула {turns!r}: такая история ушла бы модели"  # noqa: E731 - as in the notebook
    assert code.show_mistake(COFFEE[:3], describe=describe, out=shown.append)
    assert "вернула 1: такая история ушла бы модели" in shown[0]
    assert shown[1].startswith("  Версия курса на том же примере: выбросила ValueError: Сообщение №3: ход сохранён наполовину")

    fix_mistake(course, "validate_history")
    assert code.refresh() == YOURS
    assert code(COFFEE) == 2
