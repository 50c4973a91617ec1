"""The case files themselves, the case format's validation, and the comparison rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_lib.checking.cases import FAKES, CaseFormatError, load_cases, parse_cases
from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout, get_exercise
from course_lib.checking.compare import Opaque, Pairs, ProtocolViolation, decode, first_difference

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)


def _all(exercise):
    return (
        load_cases(LAYOUT.public_cases_file(exercise), exercise, "public"),
        load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden"),
    )


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_case_files_are_valid_and_sized(exercise):
    public, hidden = _all(exercise)
    assert 3 <= len(public) <= 10, "public cases: one for each typical mistake the hidden cases catch"
    assert len(hidden) >= 10, "hidden cases cover every edge of the statement"
    assert not {c.name for c in public} & {c.name for c in hidden}
    assert public[0].name.startswith("пример из условия")
    assert all(case.hint for case in hidden)
    kinds = {"raises" in case.data.get("expect", {}) for case in public + hidden if case.kind == "function"}
    assert kinds in ({True, False}, set())  # both results and exceptions are exercised


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_child_input_holds_inputs_only(exercise):
    public, hidden = _all(exercise)
    for index, case in enumerate(public + hidden):
        text = json.dumps(case.child_input(index), ensure_ascii=False)
        assert '"expect"' not in text and '"hint"' not in text and '"args_after"' not in text
        assert case.name not in text


def test_fakes_match_the_harness():
    from course_lib.checking.child import isolated

    fake = isolated.build()[2]
    for name in FAKES:
        made = fake(name)
        assert callable(made) or (type(made) is dict and made and all(callable(f) for f in made.values()))
    tools = fake("memory_tools")  # run_tool_calls's tools: numbered per case, one failing on purpose
    assert tools["memory_stats"]() == "вызов 1: записей в архиве: 3"
    assert tools["archival_memory_search"](query="x") == "вызов 2: по запросу «x», страница 0: ничего не найдено"
    with pytest.raises(ValueError, match="лишний аргумент q"):
        tools["archival_memory_search"](q="x")
    with pytest.raises(RuntimeError):
        tools["archival_memory_insert"](text="x")
    assert fake("memory_tools")["memory_stats"]() == "вызов 1: записей в архиве: 3"  # a fresh count per case
    assert fake("chars")("абв") == 3
    assert fake("words")("  a  b ") == 2
    echo = fake("echo")
    assert echo("x") == "x"
    with pytest.raises(RuntimeError):
        echo("again")
    with pytest.raises(ValueError):
        fake("tiktoken")
    # Built in a namespace of its own: nothing of the harness behind its globals.
    assert set(echo.__globals__) <= {"__builtins__", "__name__", "fake"}


def test_exercise_lookup():
    assert get_exercise("SessionHistory") is BY_NAME["session_history"]
    assert get_exercise("commit_turn.py") is BY_NAME["commit_turn"]
    with pytest.raises(KeyError):
        get_exercise("nope")


@pytest.mark.parametrize(
    "document, message",
    [
        ({"format": 2, "exercise": "commit_turn", "cases": []}, "format"),
        ({"format": 1, "exercise": "split_into_turns", "cases": []}, "относится"),
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a"],
          "expect": {"return": 1}}]}, "3 аргументов"),  # fmt: skip
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a", "b"],
          "expect": {"raises": "NoSuchError"}}]}, "неизвестное исключение"),  # fmt: skip
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a", "b"],
          "expect": {"return": 1}, "code": "import os"}]}, "неизвестные поля"),  # fmt: skip
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a", "b"],
          "expect": {"return": {"$fake": "echo"}}}]}, "только во входных"),  # fmt: skip
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a", "b"],
          "expect": {"return": 1}}] * 2}, "повторяются"),  # fmt: skip
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a", "b"],
          "expect": {"raises": "ValueError"}, "group": "validation"}]}, "только \"algorithm\""),  # fmt: skip
        ({"format": 1, "exercise": "commit_turn", "cases": [{"name": "x", "args": [[], "a", "b"],
          "expect": {"return": 2}, "group": "algorithm"}]}, "ожидается исключение"),  # fmt: skip
    ],
)
def test_malformed_case_files_are_rejected(document, message):
    with pytest.raises(CaseFormatError, match=message):
        parse_cases(document, BY_NAME["commit_turn"], "public", "test.json")


def test_hidden_cases_need_a_hint():
    document = {"format": 1, "exercise": "commit_turn",
                "cases": [{"name": "x", "args": [[], "a", "b"], "expect": {"return": 2}}]}  # fmt: skip
    with pytest.raises(CaseFormatError, match="подсказка"):
        parse_cases(document, BY_NAME["commit_turn"], "hidden", "test.json")


def test_tamper_steps_must_point_back():
    document = {"format": 1, "exercise": "session_history",
                "cases": [{"name": "x", "steps": [{"tamper": 0}]}]}  # fmt: skip
    with pytest.raises(CaseFormatError, match="tamper"):
        parse_cases(document, BY_NAME["session_history"], "public", "test.json")


# --- comparison -------------------------------------------------------------------------------


def test_decode_rebuilds_exact_types():
    node = ["l", [["d", [[["s", "role"], ["s", "user"]]]], ["i", 3], ["b", True], ["n"], ["t", []]]]
    assert decode(node) == [{"role": "user"}, 3, True, None, ()]
    assert type(decode(["f", 2])) is float


@pytest.mark.parametrize(
    "node",
    [["i", True], ["b", 1], ["s", 5], ["l", "x"], ["zz", 1], [], "s", ["d", [["s", "k"]]],
     ["d", [[["s", "k"], ["n"]], [["s", "k"], ["n"]]]], ["n", 1]],  # fmt: skip
)
def test_decode_rejects_malformed_nodes(node):
    with pytest.raises(ProtocolViolation):
        decode(node)


def test_decode_keeps_unhashable_keys_apart():
    pairs = decode(["d", [[["l", []], ["n"]]]])
    assert isinstance(pairs, Pairs) and first_difference({}, pairs) is not None


def test_comparison_is_by_exact_type():
    assert first_difference(1, True) is not None
    assert first_difference(1, 1.0) is not None
    assert first_difference([1], (1,)) is not None
    assert first_difference("a", Opaque("SneakyStr")) is not None
    assert first_difference({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]}) is None


def test_differences_are_explained_in_russian():
    assert first_difference([{"content": "a"}], [{"content": "b"}]) == (
        "результат[0]['content']: ожидалось 'a', получено 'b'"
    )
    assert "лишний ключ 'x'" in first_difference({"a": 1}, {"a": 1, "x": 2})
    assert "нет ключа 'a'" in first_difference({"a": 1}, {})
    assert "ожидалось элементов: 2, получено: 1" in first_difference([1, 2], [1])
    assert "ожидался тип list, получен SneakyList" in first_difference([], Opaque("SneakyList"))


def test_a_refusal_that_is_the_rule_counts_in_the_algorithm_share():
    # check_reply's refusals (a cut-off reply, an empty one) are what the exercise is about: a wrong
    # refusal rule must cost algorithm points, not a sliver of the 30 % for argument checks.
    from course_lib.checking.results import case_points

    exercise = BY_NAME["check_reply"]
    cases = load_cases(ROOT / "exercises" / "cases" / "check_reply.json", exercise, "public")
    groups = {case.name: case.group for case in cases}
    refusals = [case for case in cases if case.data["expect"].get("raises", "").endswith("Reply")]
    type_errors = [case for case in cases if case.data["expect"].get("raises") == "TypeError"]
    assert refusals and type_errors
    assert all(groups[case.name] == "algorithm" for case in refusals)
    assert all(groups[case.name] == "validation" for case in type_errors)
    points = dict(zip(groups, case_points(exercise, cases)))
    # Under the default split the refusals shared the validation share with the TypeErrors (3 of 10).
    assert sum(points[case.name] for case in refusals) > exercise.points * (1 - exercise.algorithm_share)
