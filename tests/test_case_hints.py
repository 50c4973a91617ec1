"""Hidden cases' hints tell the student what the case checks, and nothing of its data.

A hidden case shows the student only its name and its fixed hint. So:

* every typical mistake (a mutant of tests/test_exercises_mutants.py) fails at least one hidden
  case whose hint names the requirement it breaks: MISTAKE_TERMS below maps each mutant to words
  (case-insensitive substrings) of which one must occur in such a hint. The words are the
  requirement as the statement says it, not the mutant's code;
* a hint is one plain line of at most 160 characters, and never repeats the case's inputs or
  expected values (string values, or numbers the statement does not name).

What this cannot check, a person reviews: a case caught by several different mistakes needs a hint
that covers the requirement the case checks (its whole result), not one particular mistake.
"""

from __future__ import annotations

import re

import pytest
from test_exercises_mutants import BUILT_IN, MUTANTS, _outcomes

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import EXERCISES, CourseLayout

LAYOUT = CourseLayout(__import__("pathlib").Path(__file__).resolve().parents[1])
MAX_HINT = 160

# (exercise, mutant description) -> words, one of which a hint of a failing hidden case contains.
MISTAKE_TERMS = {
    ("build_chat_messages", "instruction not stripped"): ("strip",),
    ("build_chat_messages", "tags without newlines"): ("каждый тег на своей строке",),
    ("build_chat_messages", "history messages rebuilt"): ("как есть", "со всеми ключами"),
    ("build_chat_messages", "checks instruction fully before user_text"): ("сначала проверьте типы",),
    ("build_chat_messages", "appends to history"): ("history не меняйте", "список history не меняйте"),
    ("commit_turn", "returns 2"): ("длину всей истории", "len(history)"),
    ("commit_turn", "assistant text not stripped"): ("strip",),
    ("commit_turn", "checks each text fully in turn"): ("сначала проверьте типы",),
    ("commit_turn", "appends before validating the answer"): ("целиком или никак",),
    ("session_history", "session id not normalized"): ("session_id через strip",),
    ("session_history", "reset clears everything"): ("не очищайте хранилище целиком", "не трогает другие сессии"),
    ("session_history", "list copied, dicts shared"): ("копиями словарей",),
    ("session_history", "reset does not validate"): ("во всех трёх методах", "во всех методах"),
    ("session_history", "texts checked before session id"): ("сначала проверьте session_id",),
    ("session_history", "get_messages hands out its own empty list"): ("новым списком",),
    ("count_message_tokens", "no reply primer"): ("начала ответа",),
    ("count_message_tokens", "role not counted"): ("role",),
    ("count_message_tokens", "KeyError instead of TypeError"): ("не keyerror",),
    ("count_message_tokens", "every value counted"): ("другие ключи",),
    ("split_into_turns", "plain ValueError"): ("chathistoryerror",),
    ("split_into_turns", "exception not a ValueError"): ("наследует valueerror",),
    ("split_into_turns", "first turn checked only"): ("все пары", "каждой пары", "любой паре"),
    ("split_into_turns", "parity not checked"): ("нечётное число",),
    ("select_recent_turns", "bool accepted"): ("bool",),
    ("select_recent_turns", "skips instead of stopping"): ("остановитесь на первом",),
    ("select_recent_turns", "strict budget"): ("не превышает", "<="),
    ("select_recent_turns", "all types before all values"): ("тип и значение каждой сразу",),
    ("select_recent_turns", "budget checked before costs"): ("порядок проверок",),
    ("build_summary_source", "summary not stripped"): ("strip", "из одних пробелов"),
    ("build_summary_source", "whitespace summary kept"): ("отсутствующ",),
    ("build_summary_source", "empty message allowed"): ("пустое после strip",),
    ("build_summary_source", "one newline between blocks"): ("пустой строкой",),
    ("build_summary_source", "messages checked first"): ("проверяется первым",),
    ("build_summary_source", "contents not stripped"): ("content каждого сообщения через strip",),
    ("trim_by_message_count", "the [-0:] slice"): ("[-0:]",),
    ("trim_by_message_count", "orphan answer kept"): ("пока первым не станет user", "не должно начинаться с ответа"),
    ("trim_by_message_count", "orphan dropped even untrimmed"): ("обрезать не пришлось",),
    ("trim_by_message_count", "every system message is a prompt"): ("только первое сообщение",),
    ("trim_by_message_count", "developer instruction not kept"): ("developer",),
    ("trim_by_message_count", "bool accepted"): ("bool",),
    ("rolling_compress", "the [-0:] slice"): ("[-0:]",),
    ("rolling_compress", "summary of a summary"): ("предыдущее summary",),
    ("rolling_compress", "summary as a system message"): ("роль user", "ролью user", "сообщение user"),
    ("rolling_compress", "summary not stripped"): ("strip",),
    ("rolling_compress", "several summaries tolerated"): ("не больше одной сводки",),
    ("rolling_compress", "summarize result not checked"): ("тип результата summarize",),
    ("rolling_compress", "bool keep accepted"): ("bool",),
    ("rolling_compress", "summary role system kept as a prompt"): ("при любой роли", "какой бы ни была его роль"),
    ("rolling_compress", "returns the input list when nothing to compress"): ("новый список", "новый пустой список"),
    ("merge_facts", "old value deleted, not kept"): ("не удаляется", "остаётся на месте"),
    ("merge_facts", "case-sensitive comparison"): ("регистр",),
    ("merge_facts", "value only stripped"): ('" ".join(value.split())', "один пробел"),
    ("merge_facts", "compared with current only"): ("обновлённой",),
    ("merge_facts", "extra keys accepted"): ("лишний ключ",),
    ("merge_facts", "current's dicts changed in place"): ("current не меняется", "словари current"),
    ("merge_facts", "kind checked before types"): ("на тип раньше",),
    ("select_memories", "stops at the first misfit"): ("пропускается",),
    ("select_memories", "input order, no priority"): ("по важности", "порядке важности"),
    ("select_memories", "strict budget"): ("равна budget", "не превышает budget"),
    ("select_memories", "unknown kind raises"): ("не ошибка",),
    ("select_memories", "unknown kind first"): ("после всех известных",),
    ("select_memories", "chosen facts returned in input order"): ("порядке важности",),
    ("select_memories", "ties ordered by value"): ("из facts",),
    ("select_memories", "bool accepted"): ("bool",),
    ("build_memory_message", "developer role"): ('роль сообщения "user"',),
    ("build_memory_message", "not escaped"): ("&lt;",),
    ("build_memory_message", "only the closing tag escaped"): ("каждый символ", 'каждый "<"'),
    ("build_memory_message", "value only stripped"): ("перевод строки", '" ".join(value.split())'),
    ("build_memory_message", "escaped before the cut"): ("сначала обрезка", "после обрезки"),
    ("build_memory_message", "cut one character too long"): ("max_value_chars - 1",),
    ("build_memory_message", "input order kept"): ("важност",),
    ("build_memory_message", "empty block instead of None"): ("none",),
}

IDENTIFIER = re.compile(r"</?[a-z_]+>|[a-z_]+")  # role, kind and key names, tags: the statement's words
NUMBER = re.compile(r"-?\d+")


def _hidden(exercise):
    return load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden")


HIDDEN = [case for exercise in EXERCISES for case in _hidden(exercise)]


def _leaves(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _data(case):
    """The case's inputs and expected values. An expected exception's name is not data: the
    statement names it (and so does the case's name)."""
    data = case.data
    parts = [data.get("args", []), data.get("expect", {}).get("return"), data.get("args_after", {})]
    parts += [data.get("init", [])]
    parts += [[step.get("args", []), step.get("expect", {}).get("return")] for step in data.get("steps", [])]
    return list(_leaves(parts))


def _revealed(hint: str, case) -> list:
    found = []
    numbers = set(NUMBER.findall(hint))
    for leaf in _data(case):
        if isinstance(leaf, str):
            for text in {leaf.strip(), *(line.strip() for line in leaf.splitlines())}:
                if len(text) >= 4 and not IDENTIFIER.fullmatch(text) and text in hint:
                    found.append(text)
        elif isinstance(leaf, int) and not isinstance(leaf, bool) and (leaf < 0 or leaf >= 10):
            if str(leaf) in numbers:
                found.append(leaf)
    return list(dict.fromkeys(found))


@pytest.mark.parametrize("case", HIDDEN, ids=[f"{c.exercise}: {c.name}" for c in HIDDEN])
def test_hint_is_one_short_line(case):
    assert case.hint.strip(), "a hidden case needs a hint"
    assert len(case.hint) <= MAX_HINT, f"{len(case.hint)} characters; at most {MAX_HINT}"
    assert "\n" not in case.hint and "\r" not in case.hint


@pytest.mark.parametrize("case", HIDDEN, ids=[f"{c.exercise}: {c.name}" for c in HIDDEN])
def test_hint_does_not_reveal_the_data(case):
    assert not _revealed(case.hint, case), "the hint repeats the case's inputs or expected values"


def test_the_data_check_finds_data():
    case = next(c for c in HIDDEN if c.exercise == "select_memories" and "первая неверная" in c.name)
    assert _revealed("первая (-1) даёт ValueError", case) == [-1]
    case = next(c for c in HIDDEN if c.exercise == "commit_turn" and c.name == "внутренние переводы строк сохраняются")
    assert _revealed("ожидается «Строка 1» в начале", case) == ["Строка 1"]
    assert not _revealed("strip() убирает пробелы только по краям.", case)


def test_every_built_in_mutant_has_its_terms():
    built_in = {(name, what) for name, what, _, _ in BUILT_IN}
    assert set(MISTAKE_TERMS) == built_in, "MISTAKE_TERMS: one entry per mutant of tests/test_exercises_mutants.py"


@pytest.fixture(scope="module")
def outcomes():
    return _outcomes("hidden")


KNOWN = [mutant for mutant in MUTANTS if (mutant[0], mutant[1]) in MISTAKE_TERMS]


@pytest.mark.parametrize("mutant", KNOWN, ids=[f"{m[0]}: {m[1]}" for m in KNOWN])
def test_a_failing_hidden_case_names_the_mistake(outcomes, mutant):
    key = (mutant[0], mutant[1])
    terms = MISTAKE_TERMS[key]
    hints = [result.case.hint for result in outcomes[key].cases if not result.passed]
    assert hints, f"no hidden case catches: {key[1]}"
    assert any(term.casefold() in hint.casefold() for hint in hints for term in terms), (
        f"{key[0]}: «{key[1]}» fails hidden cases whose hints never say {' / '.join(terms)}: {hints}"
    )
