"""The customer's record across a whole request: every stated value, in the order the request holds it.

`Facts` (see `facts`) describes one support case and keeps one value of each field. A customer who
comes back over several sessions has more: several orders, a phone that changed, a city they moved
to. The ledger reads those from a request and answers memory questions by three documented rules:

1. **newest wins** — "Какой у меня сейчас телефон?" is answered with the mention that stands last in
   the request (a correction or a new value comes later than the old one);
2. **a list is every distinct value in request order** — "Какие товары я заказывал?";
3. **order in time is order in the request** — "Какой товар я заказал первым?" takes the product
   mentioned first. A request that lost the first order answers with the earliest one it still
   holds: confidently and wrongly, as a model does.

Nothing else comes in: a value absent from the request is "не вижу" and one clarifying question.

What counts as the customer's words (assistant messages never do): customer messages, the data
blocks `<conversation_summary>`, `<user_memory>`, `<recalled_turns>`, the `<core_memory>` lines of
the instruction, and the results of tool calls. Blocks are read where they stand, so a summary at
the start of the request is older than the messages after it. A summary written by the offline
model lists every order, oldest first, in «Заказы по порядку: …», which the ledger reads before
the rest of that summary.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.facts import _customer_name, find_product

KINDS = ("name", "phone", "email", "city", "order", "product")

PHONE = re.compile(r"(?<![\d+])(?:\+7|8)[\s\-()]*\d{3}[\s\-()]*\d{3}[\s\-]*\d{2}[\s\-]*\d{2}(?!\d)")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ORDER = (
    re.compile(r"\bзаказ(?:а|у|ом|е|ы|ов)?\s*(?:[:—–-]\s*)?(?:№|#|n|номер)?\s*(\d{3,})\b"),
    re.compile(r"\bномер\w*\s+(?:вашего\s+|моего\s+|нашего\s+)?заказа\s*(?:[:—–-]\s*)?(?:№|#)?\s*(\d{3,})\b"),
)
ORDERS_LABEL = "Заказы по порядку:"
"""How a summary of the offline model lists every order, oldest first."""
_ORDERS_LIST = re.compile(re.escape(ORDERS_LABEL) + r"\s*([^.]*)\.")
_ORDER_ITEM = re.compile(r"(\d{3,})(?:\s*[—–-]\s*([^;]+))?")
_SENTENCES = re.compile(r"[^.!?\n]+[.!?]?")
_CITY_CUE = re.compile(
    r"\b(?:живу|живем|живет|проживаю|нахожусь|переехал\w*|переезжа\w*|доставк\w*|доставля\w*|привез\w*"
    r"|адрес\w*|город\w*)"
)
_TRANSCRIPT_LINE = re.compile(r"^\s*(Клиент|Поддержка)\s*:\s*(.*)$")
_MEMORY_LINE = re.compile(r"^\s*-?\s*([^:\n]+):\s*(.+?)\s*$")
MEMORY_LABELS = {"имя": "name", "номер заказа": "order", "товар": "product", "телефон": "phone",
                 "e-mail": "email", "почта": "email", "город": "city"}  # fmt: skip


@dataclass(frozen=True)
class Mention:
    """One value the customer stated: its kind, its canonical form, where it stands in the request."""

    kind: str
    value: str
    position: int
    order: str | None = None
    """For a product: the order number stated with it (same sentence or memory block), if any."""


@dataclass(frozen=True)
class Ledger:
    """Every mention of a request, in request order."""

    mentions: tuple[Mention, ...] = ()

    def of(self, kind: str) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind == kind)

    def current(self, kind: str) -> str | None:
        """Rule 1: the value mentioned last."""
        found = self.of(kind)
        return found[-1].value if found else None

    def distinct(self, kind: str) -> tuple[str, ...]:
        """Rule 2: every distinct value, in order of first mention."""
        return tuple(dict.fromkeys(m.value for m in self.of(kind)))

    def product_of(self, order: str) -> str | None:
        """The product stated together with this order number (the newest such statement)."""
        found = [m.value for m in self.of("product") if m.order == order]
        return found[-1] if found else None

    def order_of(self, product: str) -> str | None:
        found = [m.order for m in self.of("product") if m.value == product and m.order]
        return found[-1] if found else None

    def orders(self) -> tuple[tuple[str, str | None], ...]:
        """(order number, its product or None) for every order, in order of first mention."""
        return tuple((number, self.product_of(number)) for number in self.distinct("order"))


# --- reading -----------------------------------------------------------------------------------


def canonical_phone(phone: str) -> str:
    """"8 (912) 345-67-89" → "+7 912 345-67-89"."""
    digits = re.sub(r"\D", "", phone)[-10:]
    return f"+7 {digits[:3]} {digits[3:6]}-{digits[6:8]}-{digits[8:]}"


def find_city(norm_sentence: str) -> lx.City | None:
    """The city a sentence says the customer lives in or wants deliveries to ("живу в Казани",
    "переехала в Самару", "доставка в Тулу"): the last «в <город>» of a sentence with such a cue;
    «не в X, а в Y» gives Y."""
    if not _CITY_CUE.search(norm_sentence):
        return None
    found = [
        (m.start(), city)
        for city in lx.CITIES
        for m in city.pattern.finditer(norm_sentence)
        if not norm_sentence[max(0, m.start() - 6) : m.start()].rstrip().endswith("не")
    ]
    return max(found, key=lambda item: item[0])[1] if found else None


@lru_cache(maxsize=8192)
def text_mentions(text: str) -> tuple[Mention, ...]:
    """Mentions in one piece of customer text, positions counted from 0 in reading order."""
    found: list[tuple[int, str, str, str | None]] = []
    name = _customer_name(text)
    if name:
        found.append((0, "name", name, None))
    for match in PHONE.finditer(text):
        found.append((match.start(), "phone", canonical_phone(match.group()), None))
    for match in EMAIL.finditer(text):
        found.append((match.start(), "email", match.group().lower(), None))
    norm = lx.normalize(text)
    for sentence in _SENTENCES.finditer(norm):
        chunk = sentence.group()
        orders = sorted({(m.start(1), m.group(1)) for p in _ORDER for m in p.finditer(chunk)})
        for start, number in orders:
            found.append((sentence.start() + start, "order", number, None))
        product = find_product(chunk)
        if product is not None:
            at = min(m.start() for m in product.pattern.finditer(chunk))
            pair = orders[0][1] if len(orders) == 1 else None
            found.append((sentence.start() + at, "product", product.nominative, pair))
        city = find_city(chunk)
        if city is not None:
            found.append((sentence.start(), "city", city.nominative, None))
    found.sort(key=lambda item: item[0])
    return tuple(Mention(kind, value, index, pair) for index, (_, kind, value, pair) in enumerate(found))


def summary_mentions(text: str) -> tuple[Mention, ...]:
    """Mentions in a summary the offline model wrote: its list of orders first (their time order),
    then the rest of the summary as text."""
    earlier: list[Mention] = []
    match = _ORDERS_LIST.search(text)
    rest = text
    if match:
        for item in match.group(1).split(";"):
            parsed = _ORDER_ITEM.search(item)
            if not parsed:
                continue
            number, product_text = parsed.group(1), parsed.group(2)
            earlier.append(Mention("order", number, len(earlier)))
            product = find_product(lx.normalize(product_text)) if product_text else None
            if product is not None:
                earlier.append(Mention("product", product.nominative, len(earlier), number))
        rest = text[: match.start()] + text[match.end() :]
    return (*earlier, *_shifted(text_mentions(rest), len(earlier)))


def memory_block_mentions(block: str) -> tuple[Mention, ...]:
    """Mentions in `<user_memory>` or core-memory lines ("- Телефон: …"); other lines as text.

    A block keeps one value of each kind, so its one order and one product are paired."""
    found: list[Mention] = []
    for line in html.unescape(block).splitlines():
        match = _MEMORY_LINE.match(line)
        kind = MEMORY_LABELS.get(match.group(1).strip().lower()) if match else None
        if kind is None:
            found += _shifted(text_mentions(customer_part(line)), len(found))
            continue
        value = match.group(2)
        if kind == "phone" and PHONE.search(value):
            value = canonical_phone(PHONE.search(value).group())
        elif kind == "product":
            product = find_product(lx.normalize(value))
            value = product.nominative if product else value
        elif kind == "email":
            value = value.lower()
        elif kind == "city":
            city = next((c for c in lx.CITIES if c.any_form.search(lx.normalize(value))), None)
            value = city.nominative if city else value
        found.append(Mention(kind, value, len(found)))
    orders, products = [m for m in found if m.kind == "order"], [m for m in found if m.kind == "product"]
    if len(orders) == 1 and len(products) == 1:
        found = [Mention(m.kind, m.value, m.position, orders[0].value) if m.kind == "product" else m for m in found]
    return tuple(found)


def customer_part(text: str) -> str:
    """The customer's words in an archive search's JSON result («клиент», «заметка»), not the support's
    replies; any other text as it is."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("клиент", "заметка") and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(data)
    return "\n".join(found)


def transcript_mentions(text: str) -> tuple[Mention, ...]:
    """Mentions in "Клиент: …" lines of a transcript (recalled turns); support lines are skipped."""
    found: list[Mention] = []
    for line in text.splitlines():
        match = _TRANSCRIPT_LINE.match(line)
        if match and match.group(1) == "Клиент":
            found += _shifted(text_mentions(match.group(2)), len(found))
    return tuple(found)


def read_ledger(messages: Sequence[Mapping[str, object]]) -> Ledger:
    """The ledger of a whole request (see the module's docstring for what counts)."""
    mentions: list[Mention] = []
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role in ("developer", "system"):
            core = _block(content, "core_memory")
            parts = [memory_block_mentions(_core_lines(core))] if core else []
        elif role == "tool":
            parts = [text_mentions(customer_part(html.unescape(content)))]
        elif role == "user":
            parts = list(_user_parts(content))
        else:
            continue  # the assistant's words are not the customer's
        for part in parts:
            mentions += _shifted(part, len(mentions))
    return Ledger(tuple(mentions))


def _user_parts(content: str) -> Iterable[tuple[Mention, ...]]:
    blocks = (("conversation_summary", summary_mentions), ("user_memory", memory_block_mentions),
              ("recalled_turns", transcript_mentions))  # fmt: skip
    rest = content
    for tag, reader in blocks:
        inner = _block(rest, tag)
        if inner is not None:
            yield reader(inner)
            rest = re.sub(rf"<{tag}>.*?</{tag}>", "", rest, flags=re.DOTALL)
    inner = _block(rest, "customer_message")
    rest = inner if inner is not None else rest
    if rest.strip():
        yield text_mentions(html.unescape(rest))


def _block(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    return match.group(1) if match else None


def _core_lines(core: str) -> str:
    return "\n".join(line for line in core.splitlines() if not line.lstrip().startswith(("<block", "</block", "(пусто)")))


def _shifted(mentions: Iterable[Mention], by: int) -> list[Mention]:
    return [Mention(m.kind, m.value, m.position + by, m.order) for m in mentions]


# --- questions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryQuestion:
    """What a memory question asks: a kind, how (current / all / first / last / of), about what."""

    kind: str
    mode: str
    subject: str | None = None


_Q = lambda pattern: re.compile(pattern)  # noqa: E731 - a short name for a table of patterns
# «Какой у меня сейчас номер телефона?», «Напомните мой e-mail», «Подскажите, какая почта у вас записана?»
_ASKS_FOR = r"\b(?:как(?:ой|ая|ую|ие)|напомн\w*|подскажите|назовите)[\s,]+(?:[\w,]+\s+){0,4}?"
_QUESTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("product", "of_order", _Q(r"\b(?:что|какой\s+товар)\s+(?:было|был|лежало|пришло)?\s*(?:\w+\s+)?в\s+заказе\s+(?:№\s*)?\d{3,}")),
    ("order", "of_product", _Q(r"\bкак\w*\s+номер\w*\s+(?:у\s+)?заказа\s+со?\s+\w+|\bномер\w*\s+заказа,?\s+в\s+котор\w+\s+(?:был\w*\s+)?\w+")),
    ("order", "first", _Q(r"\bномер\w*\s+(?:был\s+)?(?:у\s+)?(?:моего\s+)?(?:самого\s+)?перв\w+\s+заказа|\bперв\w+\s+заказ\w*\s+(?:был\s+)?под\s+каким\s+номером")),
    ("product", "first", _Q(r"\bкак\w*\s+товар\w*\s+(?:я\s+)?(?:\w+\s+)?(?:заказал\w*|купил\w*|брал\w*)\s+(?:у\s+вас\s+)?(?:самым\s+)?первым|\bс\s+какого\s+товара\s+\w+\s+мои\s+заказы")),
    ("product", "last", _Q(r"\bс\s+каким\s+товаром\s+я\s+обращал\w*\s+(?:к\s+вам\s+)?(?:в\s+)?последний\s+раз|\bкак\w*\s+товар\w*\s+(?:я\s+)?(?:\w+\s+)?(?:заказал\w*|купил\w*)\s+(?:у\s+вас\s+)?последним")),
    ("product", "all", _Q(r"\bкак\w*\s+товар\w*\s+я\s+(?:у\s+вас\s+)?(?:уже\s+)?(?:заказывал|покупал|брал)\w*|\bперечисл\w*\s+(?:\w+\s+){0,2}товар\w*")),
    ("order", "all", _Q(r"\bкак\w*\s+номер\w*\s+заказов|\bперечисл\w*\s+(?:\w+\s+){0,2}номер\w*\s+(?:\w+\s+){0,2}заказ\w*|\bномер\w*\s+(?:всех\s+)?моих\s+заказов")),
    ("phone", "current", _Q(rf"{_ASKS_FOR}(?:номер\w*\s+)?(?:моего\s+)?телефон\w*")),
    ("email", "current", _Q(rf"{_ASKS_FOR}(?:адрес\w*\s+)?(?:электронн\w*\s+)?(?:почт\w*|e-?mail\w*|имейл\w*)")),
    ("city", "current", _Q(r"\bв\s+каком\s+городе|\bкак\w*\s+город\w*|\bкуда\s+(?:вы\s+)?(?:доставля\w*|привоз\w*|везти)")),
)
_ASKING = re.compile(r"\?|\bнапомн\w*|\bперечисл\w*|\bподскажите")


def read_memory_question(text: str) -> MemoryQuestion | None:
    """The memory question a customer message asks, or None (an ordinary message)."""
    norm = lx.normalize(text)
    if not _ASKING.search(norm):
        return None
    for kind, mode, pattern in _QUESTIONS:
        match = pattern.search(norm)
        if not match:
            continue
        subject = None
        if mode == "of_order":
            subject = re.search(r"\d{3,}", match.group()).group()
        elif mode == "of_product":
            product = find_product(norm[match.start() :])
            if product is None:
                continue
            subject = product.nominative
        return MemoryQuestion(kind, mode, subject)
    return None


_WHAT = {"phone": "вашего номера телефона", "email": "вашего адреса почты", "city": "вашего города",
         "order": "номеров ваших заказов", "product": "ваших заказов", "name": "вашего имени"}  # fmt: skip
_ASK_BACK = {"phone": "Подскажите, пожалуйста, ваш номер телефона?",
             "email": "Подскажите, пожалуйста, ваш адрес электронной почты?",
             "city": "Подскажите, пожалуйста, ваш город?",
             "order": "Подскажите, пожалуйста, номер заказа?",
             "product": "Подскажите, пожалуйста, о каком товаре идёт речь?",
             "name": "Подскажите, пожалуйста, как к вам обращаться?"}  # fmt: skip


def answer_memory_question(question: MemoryQuestion, ledger: Ledger) -> str:
    """The reply by the ledger's rules; "не вижу" and one question when the request lacks the value."""
    value = answer_value(question, ledger)
    if value is None:
        return f"Я не вижу {_missing_what(question)} в нашем диалоге. {_ASK_BACK[question.kind]}"
    kind, mode = question.kind, question.mode
    if mode == "current":
        label = {"phone": "Ваш номер телефона", "email": "Ваш адрес почты", "city": "Ваш город"}[kind]
        return f"{label}: {value}."
    if mode == "all":
        return f"Вы заказывали: {value}." if kind == "product" else f"Номера ваших заказов: {value}."
    if mode == "first":
        return f"Первым вы заказали: {value}." if kind == "product" else f"Номер вашего первого заказа — {value}."
    if mode == "last":
        return f"Последним вы заказали: {value}."
    if mode == "of_order":
        return f"В заказе {question.subject} был товар: {value}."
    return f"Номер заказа с товаром «{question.subject}» — {value}."


def answer_value(question: MemoryQuestion, ledger: Ledger) -> str | None:
    kind, mode = question.kind, question.mode
    if mode == "current":
        return ledger.current(kind)
    if mode == "of_order":
        return ledger.product_of(question.subject or "")
    if mode == "of_product":
        return ledger.order_of(question.subject or "")
    values = ledger.distinct(kind)
    if not values:
        return None
    if mode == "all":
        return ", ".join(values)
    return values[0] if mode == "first" else values[-1]


def _missing_what(question: MemoryQuestion) -> str:
    if question.mode == "of_order":
        return f"товара из заказа {question.subject}"
    if question.mode == "of_product":
        return f"номера заказа с товаром «{question.subject}»"
    return _WHAT[question.kind]


# --- the record a summary keeps ----------------------------------------------------------------


@dataclass(frozen=True)
class CustomerRecord:
    """What a summary keeps beyond the current case: every order and the customer's contacts."""

    orders: tuple[tuple[str, str | None], ...] = ()
    phone: str | None = None
    email: str | None = None
    city: str | None = None

    @classmethod
    def of(cls, ledger: Ledger) -> CustomerRecord:
        return cls(ledger.orders(), ledger.current("phone"), ledger.current("email"), ledger.current("city"))

    def product_of(self, order: str | None) -> str | None:
        return next((product for number, product in self.orders if number == order), None)
