"""The offline model and tools: the pairing rule a provider enforces, and when the model calls a tool.

The pairing rule (OpenAI's, and the error it answers with, HTTP 400):
- a `tool` message must answer a call of the assistant `tool_calls` message right before its block
  of results;
- an assistant `tool_calls` message must be followed by one result for every call it made.
A trim that cuts inside an exchange therefore fails here exactly as it would in production.

When the request offers `tools` (and `tool_choice` is not "none"), and ends with the customer's
message, the model decides by these rules, in order, and only ever calls a function it was offered:
1. «Забудьте мой телефон», «удалите …», «сотрите …»  →  `memory_forget(query=<what>)`;
2. «Запомните: …»  →  `core_memory_append(label="заметки", text=<the words, verbatim>)` (a model
   obeys such a request: what it stores is the customer's text, which is why the application must
   render memory as data, never as instructions);
3. a durable fact about the customer (phone, e-mail, name, order number, product, problem, how to
   contact) that core memory does not hold yet →  `core_memory_append(label="клиент",
   text="Телефон: …")`, or `archival_memory_insert(text=…)` when only the archive is offered; a new
   value of a fact it holds →  `core_memory_replace(label="клиент", old=<that line>, new=…)`;
4. a question about something the request does not contain (phone, e-mail, name, order, …)
   →  `archival_memory_search(query=<what>)`.
Otherwise it answers in text. `tool_choice="required"` with no rule firing searches the archive for
the message (or calls the first offered function with no arguments); a named function is called
with the arguments its rule would give, else none. After the results of its calls it answers in
text: what the results say about the customer's question (a failed call only as «Не смог сохранить
это в память.»: the error's details are for the model), then its usual reply.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from course_lib.llm.offline import intents
from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.facts import extract_facts
from course_lib.llm.offline.dialogue import tag_block
from course_lib.llm.offline.ledger import answer_value, read_ledger, read_memory_question
from course_lib.llm.offline.memory import EMAIL, PHONE, memory_facts
from course_lib.prompts.tags import unwrap_tag

CORE_APPEND = "core_memory_append"
CORE_REPLACE = "core_memory_replace"
ARCHIVE_INSERT = "archival_memory_insert"
ARCHIVE_SEARCH = "archival_memory_search"
FORGET = "memory_forget"
CUSTOMER_BLOCK = "клиент"
NOTES_BLOCK = "заметки"

ORPHAN_RESULT = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
)  # OpenAI's wording, its misspelling included: what a student will search for
MISSING_RESULT = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)

_FORGET = re.compile(r"\b(?:забуд\w*|удали\w*|сотри\w*|сотрит\w*)\s+(?P<what>.+)")
_REMEMBER = re.compile(r"^\s*(?:пожалуйста,?\s*)?(?:запомните|запомни)\s*[:,—-]?\s*(?P<what>.+)", re.IGNORECASE | re.DOTALL)
_FILLER = re.compile(r"\b(?:мой|мою|моё|мое|мои|моего|мне|пожалуйста|из|памяти|всё|все|про|о|об)\b")
_ASKS = {
    "phone": re.compile(r"\bтелефон\w*"),
    "email": re.compile(r"\bпочт\w*|\be-?mail\w*|\bэлектронн\w*\s+адрес\w*"),
}
_SEARCH_WORDS = {"phone": "телефон", "email": "почта", "order": "номер заказа", "name": "имя", "product": "товар",
                 "damage": "повреждение", "problem": "проблема", "checks": "проверки", "preferences": "связь"}  # fmt: skip


# What the model searches the archive for when a memory question finds no answer in the request.
_QUESTION_SEARCH = {"phone": "телефон", "email": "почта", "city": "живу", "order": "заказ", "product": "заказ"}


def customer_text(message: Mapping[str, Any]) -> str:
    """What the customer wrote: the inside of the `<customer_message>` block, when there is one."""
    return unwrap_tag("customer_message", str(message.get("content") or ""))


def pairing_error(messages: Sequence[Mapping[str, Any]]) -> tuple[int, str] | None:
    """(index, message) of the first break of the pairing rule, or None."""
    open_ids: list[str] = []
    opened_at = -1
    answerable: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in answerable:
                return index, ORPHAN_RESULT
            answerable.discard(call_id)
            if call_id in open_ids:
                open_ids.remove(call_id)
            continue
        if open_ids:
            return opened_at, MISSING_RESULT.format(ids=", ".join(open_ids))
        answerable = set()
        if role == "assistant" and message.get("tool_calls"):
            open_ids = [call["id"] for call in message["tool_calls"]]
            answerable = set(open_ids)
            opened_at = index
    if open_ids:
        return opened_at, MISSING_RESULT.format(ids=", ".join(open_ids))
    return None


def offered_names(tools: Sequence[Mapping[str, Any]] | None) -> list[str]:
    return [tool["function"]["name"] for tool in tools or ()]


def decide_calls(
    messages: Sequence[Mapping[str, Any]], offered: Sequence[str], tool_choice: Any
) -> list[tuple[str, dict[str, Any]]]:
    """The calls (name, arguments) the model makes for this request, by the rules above; [] = answer."""
    if not offered or tool_choice == "none" or not messages or messages[-1].get("role") != "user":
        return []
    text = customer_text(messages[-1])
    ruled, together = _by_rules(text, messages[:-1])
    calls = [(name, arguments) for name, arguments in ruled if name in offered]
    forced = _forced_name(tool_choice)
    if forced is not None:
        if forced not in offered:
            return []
        return [next(((n, a) for n, a in calls if n == forced), (forced, {}))]
    if not calls and tool_choice == "required":
        return [(ARCHIVE_SEARCH, {"query": text.strip()[:200]})] if ARCHIVE_SEARCH in offered else [(offered[0], {})]
    # Alternatives in order of preference: the first offered one is made. Edits of core memory that
    # one message asks for together (a new order: its number, product and problem) go in one step.
    return calls if together else calls[:1]


def _forced_name(tool_choice: Any) -> str | None:
    if isinstance(tool_choice, Mapping) and isinstance(tool_choice.get("function"), Mapping):
        name = tool_choice["function"].get("name")
        return name if isinstance(name, str) else None
    return None


def _by_rules(text: str, earlier: Sequence[Mapping[str, Any]]) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    """(the calls the rules give, whether they are made together in one step)."""
    norm = lx.normalize(text)
    forget = _FORGET.search(norm)
    if forget:
        what = " ".join(_FILLER.sub(" ", forget.group("what")).split()).strip(" .!?,")
        return [(FORGET, {"query": what or forget.group("what").strip(" .!?")})], False
    remember = _REMEMBER.match(text)
    if remember:
        words = remember.group("what").strip()
        return [(CORE_APPEND, {"label": NOTES_BLOCK, "text": words}), (ARCHIVE_INSERT, {"text": words})], False
    question = read_memory_question(text)
    if question is not None:  # «Что было в заказе 7718?»: search when the request cannot answer
        if answer_value(question, read_ledger(earlier)) is not None:
            return [], False
        return [(ARCHIVE_SEARCH, {"query": question.subject or _QUESTION_SEARCH[question.kind]})], False
    asked = asked_kinds(norm, text)
    if asked:  # «Какой у меня телефон?» names a thing; it states no fact about it
        # Core memory counts as known: it is in every request (its lines, not the rules around it).
        said = "\n".join(str(m.get("content") or "") for m in earlier if "<core_memory>" not in str(m.get("content") or ""))
        core = core_memory_text(earlier)
        missing = [kind for kind in asked if not _request_knows(kind, said, core)]
        return ([(ARCHIVE_SEARCH, {"query": " ".join(_SEARCH_WORDS[kind] for kind in missing)})] if missing else []), False
    known = {line.partition(":")[0]: line for line in core_memory_text(earlier).splitlines() if ":" in line}
    new = [line for line in durable_facts(text) if not _already_known(line, known)]
    changed = [line for line in new if line.partition(":")[0] in known]
    added = [line for line in new if line not in changed]
    if changed:  # each new value of a kept fact replaces its old line; the rest is appended, all at once
        calls = [(CORE_REPLACE, {"label": CUSTOMER_BLOCK, "old": known[line.partition(":")[0]], "new": line})
                 for line in changed]  # fmt: skip
        if added:
            calls.append((CORE_APPEND, {"label": CUSTOMER_BLOCK, "text": "\n".join(added)}))
        return calls, True
    if new:
        line = "\n".join(new)
        return [(CORE_APPEND, {"label": CUSTOMER_BLOCK, "text": line}), (ARCHIVE_INSERT, {"text": line})], False
    return [], False


def _already_known(line: str, known: Mapping[str, str]) -> bool:
    """Core memory already says this, or more («Проблема: трещина на подставке» ⊇ «трещина»)."""
    label, _, value = line.partition(":")
    kept = known.get(label)
    return kept is not None and value.strip().casefold() in kept.partition(":")[2].casefold()


def durable_facts(text: str) -> list[str]:
    """The customer's facts worth keeping across sessions, as «Метка: значение» lines."""
    facts = extract_facts(text)
    found = []
    phones, emails = PHONE.findall(text), EMAIL.findall(text)
    if phones:
        found.append(f"Телефон: {_as_written(phones[-1])}")
    if emails:
        found.append(f"E-mail: {emails[-1].lower()}")
    if facts.customer_name:
        found.append(f"Имя: {facts.customer_name}")
    if facts.order_number:
        found.append(f"Номер заказа: {facts.order_number}")
    if facts.product:
        found.append(f"Товар: {facts.product}")
    if facts.problem:
        found.append(f"Проблема: {facts.problem}")
    if facts.preferences:
        found.append(f"Связь: {facts.preferences[-1]}")
    return found


def _as_written(phone: str) -> str:
    return " ".join(phone.split())


def asked_kinds(norm: str, text: str) -> list[str]:
    """What the message asks to be told: phone, e-mail, or one of the chat's recall kinds."""
    if "?" not in text and not re.search(r"\bнапомн\w*", norm):
        return []
    kinds = [kind for kind, pattern in _ASKS.items() if pattern.search(norm)]
    return kinds + [kind for kind in intents.recall_kinds(norm, extract_facts(text)) if kind not in kinds]


def core_memory_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The lines of the request's `<core_memory>` blocks (in the instruction), unescaped."""
    found = []
    for message in messages:
        block = tag_block(str(message.get("content") or ""), "core_memory")
        if block:
            found += [html.unescape(line) for line in block.splitlines()[1:]
                      if line and not line.startswith(("<block", "</block", "(пусто)"))]  # fmt: skip
    return "\n".join(found)


def with_core_memory(messages: list[dict[str, str]], core: str) -> list[dict[str, str]]:
    """The request as the text reply reads it: core memory's lines as a `<user_memory>` block,
    right after the instruction (core memory is read like the memory of notebook 08)."""
    if not core:
        return messages
    block = {"role": "user", "content": f"<user_memory>\n{core}\n</user_memory>"}
    at = 1 if messages and messages[0].get("role") in ("developer", "system") else 0
    return [*messages[:at], block, *messages[at:]]


def _request_knows(kind: str, said: str, core: str) -> bool:
    """Whether the request already holds the asked fact: in what was said, or in core memory's lines."""
    if kind in ("phone", "email"):
        return bool((PHONE if kind == "phone" else EMAIL).search(f"{said}\n{core}"))
    facts = extract_facts(said).merge(memory_facts(core))
    return bool(getattr(facts, intents.FACT_OF_KIND[kind]))


def contact_answer(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """«Ваш телефон: …» when the customer asks for a phone or e-mail that a `<core_memory>` block of
    the request holds (core memory is in every request: no search needed), or an earlier tool result
    of the session (a search already brought it); else None."""
    if not messages or messages[-1].get("role") != "user":
        return None
    memory = "\n".join(
        str(m.get("content") or "") for m in messages[:-1]
        if m.get("role") == "tool" or "<core_memory>" in str(m.get("content") or "")
    )
    text = customer_text(messages[-1])
    asked = asked_kinds(lx.normalize(text), text)
    if not memory or not asked or not set(asked) <= set(_ASKS):
        return None
    return _search_answer(text, memory)


def ends_with_results(messages: Sequence[Mapping[str, Any]]) -> bool:
    return bool(messages) and messages[-1].get("role") == "tool"


def answer_from_results(messages: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(the sentence about the last exchange's results, the request as a plain chat for the usual
    reply: tool messages dropped, the results' text given as the customer's memory)."""
    end = len(messages)
    start = end
    while start > 0 and messages[start - 1].get("role") == "tool":
        start -= 1
    calls = {call["id"]: call["function"]["name"] for call in messages[start - 1].get("tool_calls") or ()}
    question = next((m for m in reversed(messages[: start - 1]) if m.get("role") == "user"), None)
    question_text = customer_text(question) if question else ""
    sentences = []
    found_text = []
    for result in messages[start:end]:
        name = calls.get(result.get("tool_call_id"), "")
        content = str(result.get("content") or "")
        if content.startswith("Ошибка"):  # the details are for the model; the customer hears what it means
            sentences.append(_FAILED.get(name, "Не получилось выполнить это действие."))
        elif name == ARCHIVE_SEARCH:
            found_text.append(content)
            sentences.append(_search_answer(question_text, content))
        elif name == FORGET:
            sentences.append("Готово: удалил это из памяти.")
        elif name in (CORE_APPEND, CORE_REPLACE, ARCHIVE_INSERT):
            sentences.append("Запомнил.")
    asked = asked_kinds(lx.normalize(question_text), question_text)
    if found_text and asked and set(asked) <= set(_ASKS):
        return " ".join(sentences), []  # a question about a phone or e-mail is answered in full
    plain = [dict(role=m["role"], content=str(m.get("content") or "")) for m in messages[: start - 1]
             if m.get("role") != "tool" and not m.get("tool_calls")]  # fmt: skip
    if found_text:
        memory = "\n".join(found_text)
        plain.insert(len(plain) - 1 if plain else 0, {"role": "user", "content": f"<user_memory>\n{memory}\n</user_memory>"})
    return " ".join(sentence for sentence in sentences if sentence), with_core_memory(plain, core_memory_text(messages))


_FAILED = {
    CORE_APPEND: "Не смог сохранить это в память.",
    CORE_REPLACE: "Не смог обновить это в памяти.",
    ARCHIVE_INSERT: "Не смог сохранить это в архив.",
    ARCHIVE_SEARCH: "Не смог найти это в памяти.",
    FORGET: "Не смог удалить это из памяти — попробуйте ещё раз.",
}


def _search_answer(question: str, content: str) -> str:
    norm = lx.normalize(question)
    asked = asked_kinds(norm, question)
    phones, emails = PHONE.findall(content), EMAIL.findall(content)
    if "phone" in asked:
        return f"Ваш телефон: {_as_written(phones[-1])}." if phones else "Телефона в памяти нет."
    if "email" in asked:
        return f"Ваш e-mail: {emails[-1].lower()}." if emails else "Адреса почты в памяти нет."
    return "" if _has_entries(content) else "В памяти об этом ничего нет."


def _has_entries(content: str) -> bool:
    try:
        data = json.loads(content)
    except ValueError:
        return bool(content.strip())
    if isinstance(data, Mapping):
        data = data.get("results", data)
    return bool(data)
