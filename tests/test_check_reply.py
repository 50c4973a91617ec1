"""Notebook 01's exercise `check_reply` is the one implementation of the reply check (issue 29).

- `course_lib.chat_service.validate_reply` (every chat service of the course) is the course's
  version of `check_reply` with its refusals turned into the caller's error, messages unchanged;
- `course_lib.steps.common.validate_reply` (notebooks 01-05) calls the exercise through
  `your_code`: the student's function once it passes its public cases;
- a student's function that lets a cut-off reply through shows it under notebook 01's demo
  (`show_mistake`), beside the course's refusal, while the chat keeps the course's version.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from course_lib.chat_service import ChatServiceError, validate_reply
from course_lib.course_versions.check_reply import BlockedReply, CutOffReply, EmptyReply, ReplyError, check_reply
from course_lib.llm.client import LLMResult
from course_lib.your_code import COURSE, YOURS

from student_course import course_copy, fix_mistake, with_mistake

GOOD = LLMResult(text="  Понял: заказ 8041.\n", finish_reason="stop", model="m", response_id="r",
                 prompt_tokens=10, completion_tokens=5, total_tokens=15)  # fmt: skip

REFUSALS = [
    (("Понял: коф", "length"), CutOffReply, "Ответ остановлен из-за ограничения длины."),
    ((None, "length"), CutOffReply, "Ответ остановлен из-за ограничения длины."),
    (("Не могу", "content_filter"), BlockedReply, "Ответ остановлен фильтром содержимого."),
    (("Ответ", "tool_calls"), ReplyError, "Модель не вернула готовый ответ. Причина завершения: tool_calls."),
    (("Ответ", None), ReplyError, "Модель не вернула готовый ответ. Причина завершения: None."),
    ((None, "stop"), EmptyReply, "Модель не вернула текст ответа."),
    ((" \n\t", "stop"), EmptyReply, "Модель вернула пустой ответ."),
]


@pytest.mark.parametrize(("args", "error", "message"), REFUSALS, ids=[repr(args) for args, _, _ in REFUSALS])
def test_the_course_version_refuses_with_the_message_for_the_customer(args, error, message):
    with pytest.raises(ReplyError) as raised:
        check_reply(*args)
    assert type(raised.value) is error and str(raised.value) == message
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(("args", "error", "message"), REFUSALS, ids=[repr(args) for args, _, _ in REFUSALS])
def test_the_services_validate_reply_is_check_reply_with_the_callers_error(args, error, message):
    result = replace(GOOD, text=args[0], finish_reason=args[1])

    class ToolAgentError(RuntimeError):
        pass

    with pytest.raises(ChatServiceError, match=message.replace(".", r"\.")):
        validate_reply(result)
    with pytest.raises(ToolAgentError) as raised:
        validate_reply(result, ToolAgentError)
    assert str(raised.value) == message and raised.value.__suppress_context__


def test_a_finished_reply_comes_back_stripped_everywhere():
    from course_lib.steps.common import validate_reply as steps_validate_reply

    assert validate_reply(GOOD) == steps_validate_reply(GOOD) == check_reply(GOOD.text, "stop") == "Понял: заказ 8041."


def test_the_steps_validate_reply_runs_the_exercise_through_your_code():
    from course_lib.steps import common
    from course_lib.steps.common import ChatServiceError as StepsError
    from course_lib.your_code import your_code

    assert common.check_reply.__name__ == "check_reply"  # on_each_call("check_reply")
    stand_in = your_code("check_reply", announce=False)
    before = sum(stand_in.calls.values())
    with pytest.raises(StepsError, match="ограничения длины"):
        common.validate_reply(replace(GOOD, finish_reason="length"))
    assert common.validate_reply(GOOD) == "Понял: заказ 8041."
    assert sum(stand_in.calls.values()) == before + 2


# --- a student's function in a course folder of its own ------------------------------------------

@pytest.fixture()
def course(tmp_path):
    return course_copy(tmp_path)


def test_a_function_that_shows_a_cut_off_reply_is_shown_beside_the_course_refusal(course):
    code, lines = with_mistake(course, "check_reply", '        raise CutOffReply("Ответ',
                               '        return text.strip()\n        raise CutOffReply("Ответ')
    assert code.implementation == COURSE and "не проходит открытые тесты" in lines[-1]
    with pytest.raises(CutOffReply):  # the chat keeps refusing: the course's version runs
        code("Понял: коф", "length")
    shown: list[str] = []
    assert code.show_mistake("Понял: коф", "length", describe=lambda text: f"вернула {text!r}", out=shown.append)
    assert "вернула 'Понял: коф'" in shown[0]
    assert shown[1] == "  Версия курса на том же примере: выбросила CutOffReply: Ответ остановлен из-за ограничения длины."
    # The same refusal raised by both is the same result, though the student's names its line.
    shown.clear()
    code.show_mistake("", "stop", out=shown.append)
    assert "(exercises/check_reply.py, строка" in shown[0] and "результаты совпали" in shown[-1]

    fix_mistake(course, "check_reply")
    assert code.refresh() == YOURS
    assert code("  Понял.  ", "stop") == "Понял."
