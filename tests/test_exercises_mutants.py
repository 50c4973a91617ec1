"""Cases catch every typical mistake: each plausible wrong solution fails a hidden case *and* a public one.

A mutant is the reference solution with one requirement broken (a text replacement, checked to
apply) or a short rewrite. Each must fail at least one *hidden* case, so a student who passes the
public cases alone cannot pass the hidden ones with that mistake; and at least one *public* case,
so `check()` in the notebook shows the mistake before grading does (public cases teach). A mistake
may be left to the hidden set only when the hidden case file says why, under "left_to_hidden":
[{"mistake": "<the mutant's description>", "why": "..."}].

Besides the list below, an exercise's hidden case file may keep its own mutants (what
`course-grader instructor new-exercise` writes, and where a new exercise's author adds theirs):
"mutants": [{"mistake": "<description>", "replace": ["<old text in the reference>", "<new text>"]}].
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)

# (exercise, what is broken, old text in the reference, new text)
REPLACEMENTS = [
    ("build_chat_messages", "instruction not stripped", "    instruction = instruction.strip()\n", ""),
    ("build_chat_messages", "tags without newlines",
     "<customer_message>\\n{user_text}\\n</customer_message>", "<customer_message>{user_text}</customer_message>"),
    ("build_chat_messages", "history messages rebuilt",
     "        *history,\n", "        *({'role': m['role'], 'content': m['content']} for m in history),\n"),
    ("build_chat_messages", "checks instruction fully before user_text",
     "    if not isinstance(instruction, str) or not isinstance(user_text, str):",
     "    if not isinstance(instruction, str) or not instruction.strip():\n"
     "        raise (TypeError if not isinstance(instruction, str) else ValueError)\n"
     "    if not isinstance(user_text, str):"),
    ("commit_turn", "returns 2", "    return len(history)", "    return 2"),
    ("commit_turn", "assistant text not stripped", "    assistant_text = assistant_text.strip()\n", ""),
    ("commit_turn", "checks each text fully in turn",
     "    if not isinstance(user_text, str) or not isinstance(assistant_text, str):",
     "    if not isinstance(user_text, str) or not user_text.strip():\n"
     "        raise (TypeError if not isinstance(user_text, str) else ValueError)\n"
     "    if not isinstance(assistant_text, str):"),
    ("session_history", "session id not normalized", "        key = session_id.strip()\n        if not key:",
     "        key = session_id\n        if not key.strip():"),
    ("session_history", "reset clears everything", "        self._histories.pop(key, None)",
     "        self._histories.clear()"),
    ("session_history", "list copied, dicts shared",
     "        return [dict(message) for message in self._histories.get(key, [])]",
     "        return list(self._histories.get(key, []))"),
    ("session_history", "reset does not validate", "    def reset(self, session_id: str) -> None:\n        key = self._session_key(session_id)",
     "    def reset(self, session_id: str) -> None:\n        key = session_id"),
    ("session_history", "texts checked before session id",
     "        key = self._session_key(session_id)\n        if not isinstance(user_text, str)",
     "        if not isinstance(user_text, str) or not isinstance(assistant_text, str):\n"
     "            raise TypeError\n        key = self._session_key(session_id)\n        if not isinstance(user_text, str)"),
    ("count_message_tokens", "no reply primer", "    total = REPLY_PRIMER_TOKENS\n", "    total = 0\n"),
    ("count_message_tokens", "role not counted", " + count_text(role) + ", " + "),
    ("count_message_tokens", "KeyError instead of TypeError", 'role = message.get("role")', 'role = message["role"]'),
    ("count_message_tokens", "every value counted",
     "        total += TOKENS_PER_MESSAGE + count_text(role) + count_text(content)",
     "        total += TOKENS_PER_MESSAGE + sum(count_text(str(v)) for v in message.values())"),
    ("split_into_turns", "plain ValueError", 'raise ChatHistoryError(f"ход', 'raise ValueError(f"ход'),
    ("split_into_turns", "exception not a ValueError", "class ChatHistoryError(ValueError):",
     "class ChatHistoryError(Exception):"),
    ("split_into_turns", "first turn checked only", '        if roles != ["user", "assistant"]:',
     '        if start == 0 and roles != ["user", "assistant"]:'),
    ("split_into_turns", "parity not checked",
     "    if len(history) % 2 != 0:\n", "    if len(history) % 2 != 0 and len(history) == 1:\n"),
    ("select_recent_turns", "bool accepted", "return isinstance(value, int) and not isinstance(value, bool)",
     "return isinstance(value, int)"),
    ("select_recent_turns", "skips instead of stopping", "            break  # older", "            continue  # older"),
    ("select_recent_turns", "strict budget", "        if used + cost > available_tokens:",
     "        if used + cost >= available_tokens:"),
    ("select_recent_turns", "all types before all values",
     "        if cost <= 0:\n            raise ValueError",
     "        pass\n    for cost in turn_token_costs:\n        if cost <= 0:\n            raise ValueError"),
    ("select_recent_turns", "budget checked before costs",
     "    for cost in turn_token_costs:\n        if not _is_int(cost):",
     "    if not _is_int(available_tokens) or available_tokens < 0:\n"
     "        raise (TypeError if not _is_int(available_tokens) else ValueError)\n"
     "    for cost in turn_token_costs:\n        if not _is_int(cost):"),
    ("build_summary_source", "summary not stripped", '(previous_summary or "").strip()', '(previous_summary or "")'),
    ("build_summary_source", "whitespace summary kept",
     'summary = (previous_summary or "").strip() or "Отсутствует."',
     'summary = "Отсутствует." if previous_summary is None else previous_summary.strip()'),
    ("build_summary_source", "empty message allowed", '            raise ValueError("пустое сообщение")', "            pass"),
    ("build_summary_source", "one newline between blocks", "</previous_summary>\\n\\n", "</previous_summary>\\n"),
    ("build_summary_source", "messages checked first",
     "    if previous_summary is not None and not isinstance(previous_summary, str):",
     "    if not messages:\n        raise ValueError\n"
     "    if previous_summary is not None and not isinstance(previous_summary, str):"),
    ("build_summary_source", "contents not stripped", 'content = message["content"].strip()',
     'content = message["content"]'),
    ("trim_by_message_count", "the [-0:] slice", "    window = dialogue[len(dialogue) - max_messages :]",
     "    window = dialogue[-max_messages:]"),
    ("trim_by_message_count", "orphan answer kept", '    while start < len(window) and window[start].get("role") != "user":',
     "    while False:"),
    ("trim_by_message_count", "orphan dropped even untrimmed", "    if len(dialogue) <= max_messages:\n        return head + dialogue\n", ""),
    ("trim_by_message_count", "every system message is a prompt",
     '    has_instruction = bool(messages) and messages[0].get("role") in ("system", "developer")',
     '    has_instruction = any(m.get("role") in ("system", "developer") for m in messages)'),
    ("trim_by_message_count", "developer instruction not kept",
     'messages[0].get("role") in ("system", "developer")', 'messages[0].get("role") == "system"'),
    ("trim_by_message_count", "bool accepted", "    if isinstance(max_messages, bool) or not isinstance(max_messages, int):",
     "    if not isinstance(max_messages, int):"),
    ("rolling_compress", "the [-0:] slice", "    split_at = len(dialogue) - keep\n    old, recent = dialogue[:split_at], dialogue[split_at:]",
     "    old, recent = dialogue[:-keep], dialogue[-keep:]"),
    ("rolling_compress", "summary of a summary",
     '        text = f"Предыдущее summary:\\n{summaries[0][\'content\']}\\n\\nНовые сообщения:\\n{text}"',
     '        text = "\\n".join(f"{m[\'role\']}: {m[\'content\']}" for m in [summaries[0], *old])'),
    ("rolling_compress", "summary as a system message", '{"role": "user", "content": summary, "is_summary": True}',
     '{"role": "system", "content": summary, "is_summary": True}'),
    ("rolling_compress", "summary not stripped", "    summary = summary.strip()\n", ""),
    ("rolling_compress", "several summaries tolerated", "    if len(summaries) > 1:", "    if False:"),
    ("rolling_compress", "summarize result not checked",
     '    if not isinstance(summary, str):\n        raise TypeError("summarize должен вернуть строку")',
     "    summary = str(summary)"),
    ("rolling_compress", "bool keep accepted", "    if isinstance(keep, bool) or not isinstance(keep, int):",
     "    if not isinstance(keep, int):"),
    ("rolling_compress", "summary role system kept as a prompt",
     '        m for m in messages if m.get("role") == "system" and m.get("is_summary") is not True\n',
     '        m for m in messages if m.get("role") == "system"\n'),
    ("merge_facts", "old value deleted, not kept", '            active["active"] = False', "            history.remove(active)"),
    ("merge_facts", "case-sensitive comparison", 'active["value"].casefold() == fact["value"].casefold()',
     'active["value"] == fact["value"]'),
    ("merge_facts", "value only stripped", '    value = " ".join(value.split())\n', "    value = value.strip()\n"),
    ("merge_facts", "compared with current only", "for old in history if", "for old in current if"),
    ("merge_facts", "extra keys accepted", '    if set(fact) != {"kind", "value"}:',
     '    if not {"kind", "value"} <= set(fact):'),
    ("merge_facts", "current's dicts changed in place", "    history = [dict(fact) for fact in current]",
     "    history = list(current)"),
    ("merge_facts", "kind checked before types",
     "    if not isinstance(kind, str) or not isinstance(value, str):\n        raise TypeError",
     "    if kind not in KINDS:\n        raise ValueError\n"
     "    if not isinstance(kind, str) or not isinstance(value, str):\n        raise TypeError"),
    ("select_memories", "stops at the first misfit", "            used += token_costs[i]\n    return chosen",
     "            used += token_costs[i]\n        else:\n            break\n    return chosen"),
    ("select_memories", "input order, no priority", "    order = sorted(range(len(facts)), key=lambda i: _rank(facts[i]))",
     "    order = range(len(facts))"),
    ("select_memories", "strict budget", "if used + token_costs[i] <= budget:", "if used + token_costs[i] < budget:"),
    ("select_memories", "unknown kind raises", "return PRIORITY.index(kind) if kind in PRIORITY else len(PRIORITY)",
     "return PRIORITY.index(kind)"),
    ("select_memories", "unknown kind first", "if kind in PRIORITY else len(PRIORITY)", "if kind in PRIORITY else -1"),
    ("select_memories", "chosen facts returned in input order", "    return chosen", "    return sorted(chosen, key=facts.index)"),
    ("select_memories", "ties ordered by value", "key=lambda i: _rank(facts[i]))", 'key=lambda i: (_rank(facts[i]), facts[i]["value"]))'),
    ("select_memories", "bool accepted", "return isinstance(value, int) and not isinstance(value, bool)",
     "return isinstance(value, int)"),
    ("build_memory_message", "developer role", '{"role": "user"', '{"role": "developer"'),
    ("build_memory_message", "not escaped", '    return value.replace("<", "&lt;")', "    return value"),
    ("build_memory_message", "only the closing tag escaped", '    return value.replace("<", "&lt;")',
     '    return value.replace("</user_memory>", "&lt;/user_memory>")'),
    ("build_memory_message", "value only stripped", '    value = " ".join(value.split())', "    value = value.strip()"),
    ("build_memory_message", "escaped before the cut",
     '    if len(value) > MAX_VALUE_CHARS:\n        value = value[: MAX_VALUE_CHARS - 1] + "…"\n    return value.replace("<", "&lt;")',
     '    value = value.replace("<", "&lt;")\n    if len(value) > MAX_VALUE_CHARS:\n'
     '        value = value[: MAX_VALUE_CHARS - 1] + "…"\n    return value'),
    ("build_memory_message", "cut one character too long", 'value[: MAX_VALUE_CHARS - 1] + "…"', 'value[:MAX_VALUE_CHARS] + "…"'),
    ("build_memory_message", "input order kept", "for i in ranked)", "for i in range(len(facts)))"),
    ("build_memory_message", "empty block instead of None", "    if not values:\n        return None\n", ""),
]  # fmt: skip

REWRITES = [
    ("commit_turn", "appends before validating the answer", '''
def commit_turn(history, user_text, assistant_text):
    if not isinstance(user_text, str) or not isinstance(assistant_text, str):
        raise TypeError
    if not user_text.strip():
        raise ValueError
    history.append({"role": "user", "content": user_text.strip()})
    if not assistant_text.strip():
        raise ValueError
    history.append({"role": "assistant", "content": assistant_text.strip()})
    return len(history)
'''),
    ("session_history", "get_messages hands out its own empty list", None),
    ("rolling_compress", "returns the input list when nothing to compress", None),
    ("build_chat_messages", "appends to history", '''
def build_chat_messages(instruction, history, user_text):
    if not isinstance(instruction, str) or not isinstance(user_text, str):
        raise TypeError
    if not instruction.strip() or not user_text.strip():
        raise ValueError
    history.append({"role": "user", "content": f"<customer_message>\\n{user_text.strip()}\\n</customer_message>"})
    return [{"role": "developer", "content": instruction.strip()}, *history]
'''),
]


def _reference(name: str) -> str:
    return (LAYOUT.solutions_dir / f"{name}.py").read_text(encoding="utf-8")


def _rewrite_source(name: str, what: str, source: str | None) -> str:
    if source is not None:
        return source
    reference = _reference(name)
    if name == "session_history":
        return reference.replace(
            "        return [dict(message) for message in self._histories.get(key, [])]",
            "        return [dict(m) for m in self._histories.get(key, [])] or self._histories.setdefault(key, [])",
        )
    return reference.replace("        return list(messages)", "        return messages")


def _case_file_mutants() -> list[tuple[str, str, str, str]]:
    """The "mutants" of each hidden case file, checked for shape (an authoring error names the file)."""
    found = []
    for exercise in EXERCISES:
        path = LAYOUT.hidden_cases_file(exercise)
        if not path.is_file():
            continue
        entries = json.loads(path.read_text(encoding="utf-8")).get("mutants", [])
        assert isinstance(entries, list), f"{path.name}: mutants must be a list"
        for index, entry in enumerate(entries):
            where = f"{path.name}: mutants[{index}]"
            assert isinstance(entry, dict) and set(entry) == {"mistake", "replace"}, (
                f'{where}: expected {{"mistake": "...", "replace": ["old", "new"]}}'
            )
            mistake, replace = entry["mistake"], entry["replace"]
            assert isinstance(mistake, str) and mistake.strip(), f"{where}: mistake must be a non-empty string"
            assert isinstance(replace, list) and len(replace) == 2 and all(isinstance(t, str) for t in replace), (
                f"{where}: replace must be two strings, the old text and the new one"
            )
            found.append((exercise.name, mistake.strip(), replace[0], replace[1]))
    return found


BUILT_IN = [(name, what, old, new) for name, what, old, new in REPLACEMENTS] + [
    (name, what, None, _rewrite_source(name, what, source)) for name, what, source in REWRITES
]
_KNOWN = {(name, what) for name, what, _, _ in BUILT_IN}
MUTANTS = BUILT_IN + [mutant for mutant in _case_file_mutants() if mutant[:2] not in _KNOWN]


def _mutant_source(name, old, new):
    if old is None:
        return new
    reference = _reference(name)
    assert reference.count(old) == 1, f"{name}: the replaced text must occur once: {old!r}"
    return reference.replace(old, new)


def _outcomes(visibility: str) -> dict:
    def run(mutant):
        name, what, old, new = mutant
        exercise = BY_NAME[name]
        path = LAYOUT.hidden_cases_file(exercise) if visibility == "hidden" else LAYOUT.public_cases_file(exercise)
        cases = load_cases(path, exercise, visibility)
        source = _mutant_source(name, old, new)
        assert source != _reference(name)
        result = run_exercise(exercise, source, [cases], Limits())
        return (name, what), result

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(run, MUTANTS))


@pytest.fixture(scope="module")
def outcomes():
    return _outcomes("hidden")


@pytest.fixture(scope="module")
def public_outcomes():
    return _outcomes("public")


def _left_to_hidden(name: str) -> dict[str, str]:
    data = json.loads(LAYOUT.hidden_cases_file(BY_NAME[name]).read_text(encoding="utf-8"))
    return {entry["mistake"]: entry["why"] for entry in data.get("left_to_hidden", [])}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m[0]}: {m[1]}" for m in MUTANTS])
def test_hidden_cases_catch_the_mistake(outcomes, mutant):
    result = outcomes[(mutant[0], mutant[1])]
    assert result.status == "ok", result.message  # it ran, and still failed something
    failed = [case.case.name for case in result.cases if not case.passed]
    assert failed, f"no hidden case catches: {mutant[1]}"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m[0]}: {m[1]}" for m in MUTANTS])
def test_public_cases_catch_the_mistake_too(public_outcomes, mutant):
    name, what = mutant[0], mutant[1]
    result = public_outcomes[(name, what)]
    failed = [case.case.name for case in result.cases if not case.passed]
    if failed:
        return
    why = _left_to_hidden(name).get(what)
    assert why and why.strip(), (
        f"{name}: the mistake «{what}» passes every public case but loses points in hidden ones; "
        f"add a public case that catches it, or say why it is left to the hidden set (left_to_hidden)"
    )


def test_every_exercise_has_mutants():
    assert {mutant[0] for mutant in MUTANTS} == set(BY_NAME)


def test_mutant_descriptions_are_unique():
    keys = [(name, what) for name, what, _, _ in MUTANTS]
    assert len(keys) == len(set(keys)), "one description per mutant of an exercise"
