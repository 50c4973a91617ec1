"""Notebook 09's exercise `run_tool_loop` runs the tool chat's turns (issue 29).

- `ToolMemoryChat(run_tool_loop=...)` runs every turn on the passed loop: the chat hands it two
  callables (ask the model with the turn so far, run one round of calls), keeps its own token count,
  steps and `on_step` report around them, and turns the loop's step limit into its own refusal;
- a student's loop that fails its public cases is shown beside the course's on notebook 09's
  example (`show_mistake`), while the chat keeps running the course's version.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course_lib.course_versions.run_tool_loop import run_tool_loop as course_run_tool_loop
from course_lib.llm.client import LLMResult
from course_lib.llm.tool_calls import read_call
from course_lib.memory import MemoryStore
from course_lib.steps.tool_memory import add_exchange
from course_lib.tool_memory.agent import ToolAgentError, ToolMemoryChat
from course_lib.your_code import COURSE, YOURS, recording

from student_course import course_copy, fix_mistake, with_mistake

PHONE = "+7 912 345-67-89"
ASK = {"role": "user", "content": "Какой у меня телефон?"}


@pytest.fixture
def store(tmp_path):
    made = MemoryStore(tmp_path / "memory.sqlite3")
    yield made
    made.close()


@pytest.fixture
def client(offline_client):
    return offline_client


class SpyLoop:
    """The course's loop, remembering what the chat passed and every request it made."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.asked: list[list[dict]] = []

    def __call__(self, ask_model, run_calls, add_exchange, turn, max_steps):
        self.calls.append((turn, max_steps))

        def asking(messages):
            self.asked.append(list(messages))
            return ask_model(messages)

        return course_run_tool_loop(asking, run_calls, add_exchange, turn, max_steps)


def _chat(client, store, **options):
    return ToolMemoryChat(client, store, "oleg", new_session_id=lambda: "s1", clock=lambda: 1.0, **options)


def test_the_chat_runs_its_turn_on_the_passed_loop(client, store):
    loop = SpyLoop()
    chat = _chat(client, store, run_tool_loop=loop)
    shown = []
    reply = chat.reply(f"Мой телефон {PHONE}", on_step=shown.append)
    (turn, max_steps), = loop.calls
    assert turn[0]["role"] == "user" and PHONE in turn[0]["content"] and len(turn) == 1
    assert max_steps == chat.max_steps
    # The loop saw the turn grow; the chat counted each of its requests and reported each call.
    assert [len(asked) for asked in loop.asked] == [1, 3]
    assert reply.model_calls == 2 and reply.input_tokens > 0
    assert reply.steps and shown == list(reply.steps) and reply.steps[0].name == "core_memory_append"
    assert list(reply.turn) == [*loop.asked[-1], {"role": "assistant", "content": reply.text}]
    assert chat.history == reply.turn and PHONE in store.core_blocks("oleg").get("клиент", "")


class AlwaysSearching:
    def __init__(self) -> None:
        self.calls = 0

    def generate(self, messages, **options):
        self.calls += 1
        call = read_call(f"c{self.calls}", "archival_memory_search", '{"query": "телефон"}')
        return LLMResult(text="", finish_reason="tool_calls", model="m", response_id="r", prompt_tokens=10,
                         completion_tokens=1, total_tokens=11, tool_calls=(call,))  # fmt: skip


def test_the_loops_step_limit_is_the_chats_refusal_and_changes_nothing(store):
    model = AlwaysSearching()
    chat = _chat(model, store, max_steps=2, run_tool_loop=SpyLoop())
    with pytest.raises(ToolAgentError, match="2 раза подряд"):
        chat.reply("Какой у меня телефон?")
    assert model.calls == 3 and chat.history == () and store.turns("oleg") == []


def test_a_loop_that_fails_otherwise_is_not_taken_for_the_step_limit(client, store):
    def broken(ask_model, run_calls, add_exchange, turn, max_steps):
        raise RuntimeError("сломано")

    chat = _chat(client, store, run_tool_loop=broken)
    with pytest.raises(RuntimeError, match="сломано") as raised:
        chat.reply("Привет")
    assert not isinstance(raised.value, ToolAgentError) and chat.history == ()


def test_the_turn_records_the_students_loop(client, store):
    from course_lib.your_code import your_code

    stand_in = your_code("run_tool_loop", announce=False)
    before = sum(stand_in.calls.values())
    chat = _chat(client, store, run_tool_loop=stand_in)
    reply = chat.reply("Какой у меня телефон?")
    assert sum(stand_in.calls.values()) == before + 1
    assert ("run_tool_loop", stand_in.implementation) in reply.implementations


# --- a student's function in a course folder of its own ------------------------------------------

def lesson_model(messages):
    found = [m["content"] for m in messages if m.get("role") == "tool"]
    if found:
        return {"role": "assistant", "content": f"Нашёл в архиве: {found[-1]}"}
    call = read_call("call_1", "archival_memory_search", '{"query": "телефон"}')
    return {"role": "assistant", "content": "", "tool_calls": [call.as_wire()]}


def run_calls(tool_calls):
    return [{"role": "tool", "tool_call_id": call["id"], "content": PHONE} for call in tool_calls]


def roles(turn):
    return " → ".join("вызовы" if m.get("tool_calls") else m["role"] for m in turn)


def test_a_loop_that_drops_the_exchange_is_shown_and_the_chat_carries_on(tmp_path, client, store):
    course = course_copy(tmp_path / "course")
    code, lines = with_mistake(course, "run_tool_loop", "        messages = add_exchange(messages, reply, results)\n",
                               "        add_exchange(messages, reply, results)\n")
    assert code.implementation == COURSE and "не проходит открытые тесты" in lines[-1]

    shown: list[str] = []
    example = (lesson_model, run_calls, add_exchange, [ASK], 4)
    assert code.show_mistake(*example, describe=roles, out=shown.append)
    assert "выбросила RuntimeError: Предел шагов (4) исчерпан" in shown[0]
    assert "(exercises/run_tool_loop.py, строка" in shown[0]
    assert shown[1] == "  Версия курса на том же примере: user → вызовы → tool → assistant"

    # The chat keeps answering: the course's loop runs while the student's fails its public cases.
    chat = _chat(client, store, run_tool_loop=code)
    with recording() as used:
        reply = chat.reply("Какой у меня телефон?")
    assert reply.text and used["run_tool_loop"] == COURSE and code.calls[COURSE] == 1

    fix_mistake(course, "run_tool_loop")
    assert code.refresh() == YOURS
    assert roles(code(*example)) == "user → вызовы → tool → assistant"
