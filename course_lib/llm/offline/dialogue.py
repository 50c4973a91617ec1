"""Reading a request the way the offline model does: which facts it contains and what is asked now.

Facts come only from what the customer wrote: user messages, including a `<conversation_summary>`
block. Assistant messages are used for one thing: a short answer is read against the assistant
message right before it — "8041." is the order number only when that message asked for the order
number, and a bare "Да" / "Нет" answers a question only when that message asked a yes/no question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from course_lib.llm.offline import intents
from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.facts import Facts, extract_facts

_COURSE_TAGS = "customer_message|conversation_summary|previous_summary|conversation_fragment"
_ANY_COURSE_TAG = re.compile(rf"(?:<|&lt;)\s*/?\s*(?:{_COURSE_TAGS})\s*>", re.IGNORECASE)
NO_PREVIOUS_SUMMARY = "Отсутствует."
SPEAKERS = {"Клиент": "user", "Поддержка": "assistant"}


def strip_tags(text: str) -> str:
    """The text without the course's data tags (and their escaped forms inside data)."""
    return _ANY_COURSE_TAG.sub("", text).strip()


def tag_block(text: str, tag: str) -> str | None:
    """The content of `<tag>…</tag>` in `text`, or None when the block is absent."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    return match.group(1).strip() if match else None


@dataclass(frozen=True)
class Turn:
    """One message of the conversation, tags removed: role "user" or "assistant"."""

    role: str
    text: str
    is_summary: bool = False
    quoted_summary: bool = False
    """A summary that sits in a transcript as a customer line (read lossily, see `headline`)."""


@dataclass(frozen=True)
class ChatContext:
    """What a chat request tells the model."""

    earlier: Facts
    """Facts from the summary and from the customer's earlier messages."""
    current: Facts
    """Facts stated in the current (last) customer message, short answers interpreted."""
    current_text: str
    """The current customer message, tags removed."""
    unexplained_number: str | None = None
    """A bare number in the current message that nothing explains ("8041." with no question before)."""
    yes_no: str | None = None
    """"yes" / "no" when the current message is just «Да» / «Нет»."""
    yes_no_question: str | None = None
    """The yes/no question right before it, if the request shows one (else the answer is unclear)."""

    @property
    def known(self) -> Facts:
        return self.earlier.merge(self.current)


def is_summary_request(messages: Sequence[Mapping[str, str]]) -> bool:
    """A summary request carries a `<conversation_fragment>` block in its last user message."""
    last_user = _last_user_content(messages)
    return last_user is not None and tag_block(last_user, "conversation_fragment") is not None


def read_chat_request(messages: Sequence[Mapping[str, str]]) -> ChatContext:
    turns = list(_turns(messages))
    current_index = max((i for i, t in enumerate(turns) if t.role == "user" and not t.is_summary), default=None)
    if current_index is None:
        return ChatContext(earlier=facts_of_turns(turns), current=Facts(), current_text="")
    earlier = facts_of_turns(turns[:current_index])
    previous_assistant = _previous_assistant(turns, current_index)
    current, unexplained = interpret_customer_text(turns[current_index].text, previous_assistant)
    yes_no, question = interpret_yes_no(turns[current_index].text, previous_assistant)
    return ChatContext(
        earlier=earlier,
        current=current,
        current_text=turns[current_index].text,
        unexplained_number=unexplained,
        yes_no=yes_no,
        yes_no_question=question,
    )


def read_summary_request(content: str) -> tuple[Facts, Facts]:
    """(facts of `<previous_summary>`, facts of `<conversation_fragment>`) of a summary request."""
    previous_text = tag_block(content, "previous_summary") or ""
    if previous_text.strip() in ("", NO_PREVIOUS_SUMMARY):
        previous = Facts()
    else:
        previous = extract_facts(strip_tags(previous_text))
    fragment = tag_block(content, "conversation_fragment") or ""
    return previous, facts_of_turns(fragment_turns(fragment))


# A summary quoted as a customer line inside the fragment: the seed-001 pitfall (no `is_summary`
# marker, so the old summary was folded as if the customer had said it).
_QUOTED_SUMMARY = re.compile(r"conversation_summary|Уже сделано:|Установлено:|Пожелания:|Имя клиента:")


def fragment_turns(fragment: str) -> list[Turn]:
    """Turns of a transcript written as "Клиент: …" / "Поддержка: …" lines."""
    speakers: list[list[str]] = []
    for line in fragment.splitlines():
        match = re.match(r"^\s*(Клиент|Поддержка)\s*:\s*(.*)$", line)
        if match:
            speakers.append([SPEAKERS[match.group(1)], match.group(2)])
        elif speakers:
            speakers[-1][1] += "\n" + line
    return [
        Turn(role, strip_tags(text), quoted_summary=role == "user" and bool(_QUOTED_SUMMARY.search(text)))
        for role, text in speakers
    ]


def headline(facts: Facts) -> Facts:
    """What survives when a recap is retold as chat text: the case's headline, not its details.

    Real models re-compress a quoted summary like any other remark and drop details first; the
    offline model does the same on purpose, so the "summary of a summary" pitfall loses facts.
    """
    return Facts(order_number=facts.order_number, product=facts.product, problem=facts.problem)


def facts_of_turns(turns: Iterable[Turn]) -> Facts:
    """All facts the customer stated in these turns, oldest first, newer values winning."""
    facts = Facts()
    previous_assistant = ""
    for turn in turns:
        if turn.role == "assistant":
            previous_assistant = turn.text
            continue
        if turn.is_summary:
            facts = facts.merge(extract_facts(turn.text))
        elif turn.quoted_summary:
            facts = facts.merge(headline(extract_facts(turn.text)))
        else:
            stated, _ = interpret_customer_text(turn.text, previous_assistant)
            facts = facts.merge(stated)
        previous_assistant = ""
    return facts


def interpret_customer_text(text: str, previous_assistant: str) -> tuple[Facts, str | None]:
    """Facts of one customer message, with a short answer read against the question before it.

    Returns the facts and, if the message is a bare number nobody asked for, that number.
    """
    facts = extract_facts(text)
    norm = lx.normalize(text)
    asked = intents.assistant_asks(lx.normalize(previous_assistant))
    number = intents.bare_number(norm)
    if number is not None:
        if "order" in asked:
            return facts.merge(Facts(order_number=number)), None
        return facts, number
    if "name" in asked and facts.customer_name is None:
        name = intents.bare_name(text)
        if name:
            return facts.merge(Facts(customer_name=name)), None
    return facts, None


def interpret_yes_no(text: str, previous_assistant: str) -> tuple[str | None, str | None]:
    """For a bare «Да» / «Нет»: ("yes" | "no", the question it answers or None); else (None, None).

    The question counts only if the assistant message right before asked a yes/no question: after
    a compression that dropped that message, "Да" answers nothing the model can see.
    """
    answer = intents.bare_yes_no(lx.normalize(text))
    if answer is None:
        return None, None
    if "yes_no" not in intents.assistant_asks(lx.normalize(previous_assistant)):
        return answer, None
    return answer, intents.yes_no_question(previous_assistant)


def _turns(messages: Sequence[Mapping[str, str]]) -> Iterable[Turn]:
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if role == "assistant":
            yield Turn("assistant", strip_tags(content))
        elif role == "user":
            summary = tag_block(content, "conversation_summary")
            if summary is not None:
                yield Turn("user", strip_tags(summary), is_summary=True)
                rest = re.sub(r"<conversation_summary>.*?</conversation_summary>", "", content, flags=re.DOTALL)
                if rest.strip():
                    yield Turn("user", strip_tags(rest))
            else:
                yield Turn("user", strip_tags(content))
        # instruction messages (developer/system) carry rules, not facts about the case


def _previous_assistant(turns: list[Turn], index: int) -> str:
    if index > 0 and turns[index - 1].role == "assistant":
        return turns[index - 1].text
    return ""


def _last_user_content(messages: Sequence[Mapping[str, str]]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content") or ""
    return None
