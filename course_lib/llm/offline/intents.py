"""What a message does besides stating facts: asks to recall something, tries to change the rules,
greets, thanks, asks for a pick-up, or is a bare answer to the assistant's previous question
("8041." after "номер заказа?", "Да" / "Нет" after a yes/no question).

All functions take text already passed through `lexicon.normalize` unless they say otherwise.
"""

from __future__ import annotations

import re

from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.facts import Facts

RECALL_KINDS = ("order", "name", "product", "damage", "problem", "checks", "preferences")

_RECALL_MARKER = re.compile(
    r"\?|\bнапомн\w*|\bпомни\w*|\bпомните"
    r"|\bя\s+(?:уже\s+|вам\s+)?(?:называл|говорил|сообщал|писал|указывал|упоминал|рассказывал)\w*"
)
_RECALL_PATTERNS: dict[str, re.Pattern[str]] = {
    kind: re.compile(pattern)
    for kind, pattern in {
        "order": r"\bномер\w*\s+(?:моего\s+|нашего\s+)?заказа|\bкак\w*\s+(?:у\s+меня\s+)?заказ\b",
        "name": r"\bкак\s+меня\s+зовут|\bмое\s+имя|\bкак\s+(?:вы\s+)?ко\s+мне\s+обращ\w*",
        "product": r"\bкак\w*\s+(?:у\s+меня\s+)?товар\w*|\bо\s+каком\s+товаре|\bчто\s+за\s+товар"
        r"|\bкак\w*\s+устройств\w*|\bчто\s+я\s+(?:заказал|купил)",
        "damage": r"\bчто\s+(?:именно\s+)?(?:было\s+|там\s+)?(?:поврежд|сломан|разбит)\w*"
        r"|\bкак\w*\s+(?:было\s+)?повреждени\w*",
        "problem": r"\bкак\w*\s+(?:у\s+меня\s+)?(?:была\s+)?проблем\w*|\bв\s+чем\s+(?:\w+\s+){0,2}проблема"
        r"|\bчто\s+(?:у\s+меня\s+)?случилось|\bна\s+что\s+я\s+жаловал\w*",
        "checks": r"\bчто\s+я\s+(?:уже\s+)?(?:проверил|сделал|проверял)\w*|\bкак\w*\s+проверк\w*",
        "preferences": r"\bкак\s+я\s+(?:просил|хотел)\w*\s+связ\w*|\bкак\w*\s+(?:у\s+меня\s+)?пожелани\w*",
    }.items()
}
FACT_OF_KIND = {
    "order": "order_number",
    "name": "customer_name",
    "product": "product",
    "damage": "damaged_part",
    "problem": "problem",
    "checks": "checks",
    "preferences": "preferences",
}


def recall_kinds(norm: str, stated: Facts) -> tuple[str, ...]:
    """The facts the message asks to be reminded of, e.g. ("order", "damage").

    A kind the message itself supplies ("Номер заказа 7718?") is not a recall question.
    """
    if not _RECALL_MARKER.search(norm):
        return ()
    return tuple(
        kind
        for kind in RECALL_KINDS
        if _RECALL_PATTERNS[kind].search(norm) and not getattr(stated, FACT_OF_KIND[kind])
    )


def is_override_attempt(norm: str) -> bool:
    """Whether the text tries to change the assistant's rules ("игнорируй правила", "ты теперь…")."""
    return any(pattern.search(norm) for pattern in lx.OVERRIDE_PATTERNS)


_GREETING = re.compile(r"^\W*(?:здравствуй\w*|добрый\s+(?:день|вечер)|доброе\s+утро|привет\w*)")
_THANKS_ONLY = re.compile(r"^\W*(?:спасибо|благодарю)(?:\s+(?:большое|вам|огромное))*[\s!.,)]*$")


def is_greeting(norm: str) -> bool:
    return bool(_GREETING.search(norm))


def is_thanks_only(norm: str) -> bool:
    return bool(_THANKS_ONLY.search(norm))


_BARE_NUMBER = re.compile(r"^\W*(?:(?:это|номер|мой|вот)\s+)*[№#]?\s*(\d{3,})\s*[.!]?\s*$")
_BARE_NAME = re.compile(r"^\s*(?:(?i:я|меня\s+зовут|это)\s+)?([А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?)\s*[.!]?\s*$")


def bare_number(norm: str) -> str | None:
    """The number if the whole message is just a number ("8041.", "№8041")."""
    match = _BARE_NUMBER.match(norm)
    return match.group(1) if match else None


def bare_name(text: str) -> str | None:
    """A capitalised single word ("Анна."), read from the original (not normalized) text."""
    match = _BARE_NAME.match(text)
    return match.group(1) if match else None


_BARE_YES_NO = re.compile(
    r"^\W*(да|нет)(?:[\s,]+(?:да|конечно|давайте|пожалуйста|спасибо|не\s+надо|не\s+нужно))*[\s.!)]*$"
)


def bare_yes_no(norm: str) -> str | None:
    """"yes" or "no" if the whole message is just «Да» / «Нет» (with a polite word or two)."""
    match = _BARE_YES_NO.match(norm)
    if not match:
        return None
    return "yes" if match.group(1) == "да" else "no"


_PICKUP = re.compile(
    r"\bне\s+(?:смогу|могу|получится)\s+(?:\w+\s+){0,2}(?:привезти|отвезти|довезти)"
    r"|\b(?:привезти|отвезти|довезти)\s+(?:\w+\s+){0,5}не\s+(?:смогу|могу|получится)"
)


def needs_pickup(norm: str) -> bool:
    """Whether the customer says they cannot bring the item themselves ("сам отвезти не смогу")."""
    return bool(_PICKUP.search(norm))


_SENTENCE = re.compile(r"[^.!?]*[.!?]?")
_ASKS_ORDER = re.compile(r"\bномер\w*\s+(?:вашего\s+)?заказа")
_ASKS_NAME = re.compile(r"\bкак\s+(?:вас\s+зовут|к\s+вам\s+обращаться)|\bваше\s+имя")
_REQUEST = re.compile(r"\?|\b(?:уточните|укажите|подскажите|назовите|напишите|сообщите|пришлите|напомните)\b")
# A question answered by «да» / «нет»: it offers or proposes something ("Прислать курьера?",
# "Хотите, чтобы мы оформили возврат?"). "Подскажите номер заказа?" or "Что вы проверили?" are not.
_ASKS_YES_NO = re.compile(
    r"^\s*(?:хотите|желаете|нужно\s+ли|согласны|подтверждаете|прислать|оформить|отправить|записать|вызвать"
    r"|передать|соединить)\b[^?]*\?$"
)


def assistant_asks(norm: str) -> frozenset[str]:
    """What an assistant message asked the customer for: {"order"}, {"name"}, {"yes_no"}, or nothing.

    Only a sentence that both names the thing and asks ("Уточните номер заказа.", "Какой номер
    заказа?") counts; "Номер вашего заказа — 7718." is an answer, not a question. "yes_no": a
    sentence that proposes something and ends with "?" ("Прислать курьера?").
    """
    asked: set[str] = set()
    for sentence in _SENTENCE.findall(norm):
        if not _REQUEST.search(sentence):
            continue
        if _ASKS_YES_NO.search(sentence):
            asked.add("yes_no")
        if _ASKS_ORDER.search(sentence):
            asked.add("order")
        if _ASKS_NAME.search(sentence):
            asked.add("name")
    return frozenset(asked)


def yes_no_question(text: str) -> str | None:
    """The last yes/no question of an assistant message, as written (not normalized), or None."""
    norm = lx.normalize(text)  # same length as `text`, so the offsets fit the original
    found = None
    for match in _SENTENCE.finditer(norm):
        if match.group().strip() and _ASKS_YES_NO.search(match.group()):
            found = text[match.start() : match.end()].strip()
    return found
