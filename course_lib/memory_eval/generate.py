"""The generator of the course's memory benchmark: synthetic support customers, written by this course.

    python -m course_lib.memory_eval.generate            # rewrites course_lib/data/memory_eval.json
    python -m course_lib.memory_eval.generate --check    # exit 1 if the shipped file differs

A fixed seed makes the file reproducible; `tests/test_memory_eval_dataset.py` regenerates it and
compares. Every customer has 3–8 sessions (20–200 customer turns in all) with the noise of real chats:
small talk, corrections, long letters, typos in ordinary words (never in a value). Each question
labels the turns that hold its evidence; a value is always written in a form the offline model and
`score_answer` both read (a phone in any common format, a city after «в», a product by name).

Support lines are scripted and never repeat a value: what the customer said is the only evidence.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.llm.offline import lexicon as lx

SEED = 20261205
CUSTOMERS = 40
DATASET_PATH = Path(__file__).resolve().parent.parent / "data" / "memory_eval.json"

FEMALE = ("Ольга", "Анна", "Мария", "Екатерина", "Наталья", "Ирина", "Светлана", "Юлия", "Татьяна", "Елена",
          "Дарья", "Ксения", "Полина", "Вера", "Алина", "Надежда", "Людмила", "Галина", "Софья", "Марина")
MALE = ("Дмитрий", "Алексей", "Сергей", "Андрей", "Михаил", "Иван", "Николай", "Павел", "Егор", "Артём",
        "Виктор", "Роман", "Олег", "Григорий", "Константин", "Денис", "Фёдор", "Тимур", "Илья", "Борис")
LATIN = {"а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z", "и": "i",
         "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
         "у": "u", "ф": "f", "х": "h", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sch", "ы": "y", "ь": "", "ъ": "",
         "э": "e", "ю": "yu", "я": "ya"}  # fmt: skip
DOMAINS = ("mail.ru", "yandex.ru", "gmail.com", "inbox.ru", "bk.ru", "rambler.ru")
# Products whose name is not also the word for a contact («телефон»).
PRODUCTS = tuple(p for p in lx.PRODUCTS if p.nominative != "телефон")
PROBLEMS_MAINS = ("не включается", "не работает", "шумит", "не нагревается", "протекает")
PROBLEMS_BATTERY = ("не заряжается", "не включается", "не работает")
DAMAGE = (("трещина", "подставк", "на подставке трещина"), ("царапина", "корпус", "на корпусе глубокая царапина"),
          ("скол", "корпус", "на корпусе скол"), ("вмятина", "корпус", "на корпусе вмятина"))  # fmt: skip
MISSING = ("пришёл без кабеля", "в комплекте нет инструкции", "в комплекте нет зарядного устройства")

# Typos a hurried customer makes in ordinary words; values are never touched.
TYPOS = {"Здравствуйте": "Здраствуйте", "пожалуйста": "пожалуста", "Спасибо": "Спасиб", "извините": "извените",
         "сейчас": "щас", "конечно": "конешно", "что-то": "чтото", "вообще": "вобще", "сегодня": "седня"}  # fmt: skip

CATEGORIES = ("single_session", "multi_session", "update", "temporal", "abstention", "forgotten")


@dataclass
class Order:
    number: str
    product: lx.Noun
    problem: str


@dataclass
class Person:
    """The ground truth about one customer, and the turns being written for them."""

    cid: str
    name: str
    female: bool
    rng: random.Random
    orders: list[Order] = field(default_factory=list)
    phones: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    cities: list[lx.City] = field(default_factory=list)
    sessions: list[dict] = field(default_factory=list)
    # (kind, value) -> [(session, turn)] where it was stated; "forgotten" ones move to `erased`
    said: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)
    erased: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)
    name_said: bool = False
    forgot_at: int | None = None

    def g(self, male: str, female: str) -> str:
        return female if self.female else male

    def add_session(self) -> int:
        day = (self.sessions[-1]["day"] if self.sessions else 0) + self.rng.randint(1, 21)
        self.sessions.append({"id": f"{self.cid}-s{len(self.sessions) + 1}", "day": day, "turns": []})
        return len(self.sessions) - 1

    def say(self, text: str, support: str, *values: tuple[str, str], typo: bool = True) -> None:
        session = len(self.sessions) - 1
        turns = self.sessions[session]["turns"]
        if typo and self.rng.random() < 0.25:
            text = _typo(text, self.rng)
        turns.append({"customer": text, "support": support})
        for key in values:
            self.said.setdefault(key, []).append((session, len(turns) - 1))

    def forget(self) -> None:
        self.say("Удалите, пожалуйста, все мои данные из вашей системы.", "Готово: все ваши данные удалены.",
                 typo=False)  # fmt: skip
        self.sessions[-1]["turns"][-1]["action"] = "forget"
        self.forgot_at = len(self.sessions) - 1
        for key, where in self.said.items():
            self.erased.setdefault(key, []).extend(where)
        self.said = {}
        self.name_said = False


def _typo(text: str, rng: random.Random) -> str:
    words = [word for word in TYPOS if word in text]
    if not words:
        return text
    word = rng.choice(words)
    return text.replace(word, TYPOS[word], 1)


def _phone(rng: random.Random) -> tuple[str, str]:
    """(as the customer writes it, canonical "+7 912 345-67-89")."""
    code = rng.choice(("912", "915", "916", "903", "905", "921", "926", "950", "977", "999"))
    rest = f"{rng.randint(100, 999)}{rng.randint(10, 99)}{rng.randint(10, 99)}"
    canonical = f"+7 {code} {rest[:3]}-{rest[3:5]}-{rest[5:]}"
    written = rng.choice((
        canonical, f"8 ({code}) {rest[:3]}-{rest[3:5]}-{rest[5:]}", f"+7{code}{rest}", f"8{code}{rest}",
        f"+7 ({code}) {rest[:3]} {rest[3:5]} {rest[5:]}",
    ))  # fmt: skip
    return written, canonical


def _email(person: Person, rng: random.Random) -> str:
    name = "".join(LATIN.get(ch, ch) for ch in person.name.lower())
    tail = rng.choice(("", str(rng.randint(1, 99)), f".{rng.choice('kmsvpr')}", f"_{rng.randint(1970, 2004)}"))
    return f"{name}{tail}@{rng.choice(DOMAINS)}"


def _order_number(rng: random.Random, taken: set[str]) -> str:
    while True:
        number = str(rng.randint(1000, 99999))
        if number not in taken:
            taken.add(number)
            return number


def _problem(product: lx.Noun, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.35:
        noun, part, phrase = rng.choice(DAMAGE)
        if part == "подставк" and product.nominative != "монитор":
            return "на корпусе трещина"
        return phrase
    if roll < 0.5:
        return rng.choice(MISSING)
    return rng.choice(PROBLEMS_MAINS if product.mains_powered else PROBLEMS_BATTERY)


# --- what customers say ------------------------------------------------------------------------

GREETINGS = ("Здравствуйте!", "Добрый день!", "Добрый вечер.", "Здравствуйте, нужна помощь.", "Доброе утро!")
RETURNING = ("Здравствуйте, это снова я.", "Добрый день, я уже писал{a} вам раньше.", "Здравствуйте! Снова к вам.",
             "Привет, опять я.", "Добрый вечер, у меня ещё вопрос.")  # fmt: skip
# Small talk and process questions, each with a support line that fits it. A session never repeats one.
SMALL_TALK = (
    ("Подождите минутку, ищу документы.", "Конечно, не торопитесь."),
    ("А сколько обычно занимает рассмотрение?", "Обычно несколько рабочих дней."),
    ("Понятно, спасибо за объяснение.", "Рад помочь."),
    ("Извините, что так долго отвечаю.", "Ничего страшного, я на связи."),
    ("Ладно, давайте так.", "Хорошо."),
    ("У вас сегодня много обращений, наверное?", "Да, сегодня обращений много."),
    ("Спасибо, что быстро отвечаете.", "Стараемся!"),
    ("Сейчас посмотрю и напишу.", "Хорошо, жду."),
    ("Честно говоря, я уже устал{a} от этой истории.", "Понимаю вас, постараемся решить быстрее."),
    ("Хорошо, я понял{a}.", "Отлично."),
    ("Договорились.", "Договорились."),
    ("А можно как-то ускорить?", "Передам просьбу специалисту."),
    ("Ясно. А что дальше?", "Специалист рассмотрит обращение и напишет вам."),
    ("Погода сегодня ужасная, курьеру не позавидуешь.", "Это точно."),
    ("Я на работе, отвечаю урывками.", "Ничего, пишите, когда удобно."),
    ("Окей.", "Хорошо."),
    ("Сейчас уточню у мужа.", "Конечно."),
    ("Ого, не знал{a}, что так можно.", "Да, так тоже можно."),
    ("Вроде всё. Хотя подождите.", "Жду."),
    ("Спасибо, вы очень помогли.", "Рад помочь."),
    ("Мне главное, чтобы вопрос решился.", "Понимаю, сделаем всё возможное."),
    ("Понимаю, что вы не виноваты.", "Спасибо за понимание."),
    ("Хорошо, буду ждать ответа.", "Спасибо за терпение."),
    ("А фото нужно прикладывать?", "Если есть, приложите, это ускорит рассмотрение."),
    ("Курьер сказал, что всё проверено, а оказалось — нет.", "Сочувствую, так быть не должно."),
    ("В прошлый раз мне быстро помогли, надеюсь, и сейчас так будет.", "Постараемся."),
    ("Мне перезвонят или напишут?", "Ответ придёт в этот чат."),
    ("Можно я потом допишу подробности?", "Конечно, пишите в любое время."),
    ("Документы я сохранил{a}, если что — пришлю.", "Хорошо, спасибо."),
    ("А в выходные вы работаете?", "Да, чат работает каждый день."),
    ("Простите, отвлекли. Я снова здесь.", "Ничего страшного."),
    ("Напишите, пожалуйста, когда будут новости.", "Обязательно напишем."),
    ("Это уже второй раз за год, между прочим.", "Понимаю ваше недовольство."),
    ("Ладно, не буду вас задерживать.", "Вы не задерживаете, спрашивайте."),
    ("Угу, понял{a}.", "Хорошо."),
    ("А инструкцию можно где-то скачать?", "Инструкции есть на сайте, в карточке товара."),
    ("Муж говорит, что сам бы починил, но я не разрешаю.", "И правильно: ремонт лучше доверить сервису."),
    ("Ладно, подожду ещё немного.", "Спасибо за терпение."),
    ("Сегодня весь день на телефоне, столько дел.", "Понимаю, не спешите."),
    ("А чек нужен?", "Достаточно номера заказа."),
)
CLOSINGS = ("Спасибо, на сегодня всё.", "Спасибо, до свидания!", "Хорошего дня!", "Всё, спасибо за помощь.",
            "Ладно, жду новостей.")  # fmt: skip
SUPPORT_ACK = ("Спасибо, записал.", "Понял вас.", "Хорошо, учёл.", "Спасибо за подробности.", "Принято.")


def _fill(text: str, person: Person) -> str:
    return text.replace("{a}", person.g("", "а"))


def introduce_name(person: Person) -> None:
    text = person.rng.choice((f"Меня зовут {person.name}.", f"Здравствуйте, меня зовут {person.name}.",
                              f"Добрый день! Меня зовут {person.name}, пишу по поводу заказа."))  # fmt: skip
    person.say(text, "Здравствуйте! Чем могу помочь?", ("name", person.name))
    person.name_said = True


def introduce_order(person: Person, order: Order, long_letter: bool) -> None:
    rng = person.rng
    product = order.product
    key_order, key_product = ("order", order.number), ("product", product.nominative)
    if long_letter:
        text = (f"Пишу уже не первый раз, поэтому изложу всё по порядку. Заказ {order.number}: "
                f"{product.nominative}, {_CAME[product.gender]} на прошлой неделе. {_problem_sentence(order)} "
                f"Коробка была целой, курьер торопился, и проверить сразу я не успел{person.g('', 'а')}. "
                f"Вечером включил{person.g('', 'а')} и увидел{person.g('', 'а')} проблему. "
                "Очень прошу разобраться, вещь нужна к выходным.")  # fmt: skip
    else:
        text = rng.choice((
            f"Заказ {order.number}: {product.nominative}. {_problem_sentence(order)}",
            f"У меня заказ {order.number} — {product.nominative}. {_problem_sentence(order)}",
            f"Номер заказа {order.number}, там {product.nominative}. {_problem_sentence(order)}",
        ))  # fmt: skip
    person.say(text, rng.choice(("Понял, сочувствую. Разберёмся.", "Спасибо, передам специалисту.",
                                 "Понимаю. Давайте разберёмся.")), key_order, key_product)  # fmt: skip


_PRONOUN = {"m": "Он", "f": "Она", "n": "Оно", "pl": "Они"}
_CAME = {"m": "пришёл", "f": "пришла", "n": "пришло", "pl": "пришли"}


def _problem_sentence(order: Order) -> str:
    product, problem = order.product, order.problem
    if problem.startswith(("на ", "в комплекте")):
        return problem[0].upper() + problem[1:] + "."
    if problem.startswith("пришёл без"):
        return f"{_PRONOUN[product.gender]} {problem.replace('пришёл', _CAME[product.gender])}."
    verb = problem
    if product.gender == "pl":  # «наушники не заряжаются», «шумят»
        verb = problem.replace("ется", "ются").replace("ает", "ают").replace("ит", "ят")
    return f"{_PRONOUN[product.gender]} {verb}."


def give_phone(person: Person, *, update: bool) -> None:
    rng = person.rng
    written, canonical = _phone(rng)
    person.phones.append(canonical)
    if update:
        text = rng.choice((f"У меня сменился номер, теперь звоните на {written}.",
                           f"Запишите, пожалуйста, мой новый телефон: {written}.",
                           f"Старый номер больше не работает. Новый номер телефона {written}."))  # fmt: skip
    else:
        text = rng.choice((f"Мой телефон {written}.", f"Если что, звоните: {written}.",
                           f"Номер телефона для связи {written}."))  # fmt: skip
    person.say(text, rng.choice(SUPPORT_ACK), ("phone", canonical))


def correct_phone(person: Person) -> None:
    """A slip and its correction in the next message: the corrected value is the newer one."""
    rng = person.rng
    wrong_written, wrong = _phone(rng)
    person.phones.append(wrong)
    person.say(f"Мой телефон {wrong_written}.", rng.choice(SUPPORT_ACK), ("phone", wrong))
    written, canonical = _phone(rng)
    person.phones.append(canonical)
    person.say(f"Ой, извините, ошиб{person.g('ся', 'лась')} в номере. Правильный: {written}.",
               "Ничего страшного, исправил.", ("phone", canonical))  # fmt: skip


def give_email(person: Person, *, update: bool) -> None:
    rng = person.rng
    email = _email(person, rng)
    while email in person.emails:
        email = _email(person, rng)
    person.emails.append(email)
    if update:
        text = rng.choice((f"Почту я сменил{person.g('', 'а')}, теперь пишите на {email}.",
                           f"Мой новый адрес почты: {email}, старый не проверяю."))  # fmt: skip
    else:
        text = rng.choice((f"Моя почта {email}.", f"Документы можно прислать на {email}.",
                           f"Электронная почта для ответа: {email}."))  # fmt: skip
    person.say(text, rng.choice(SUPPORT_ACK), ("email", email))


def give_city(person: Person, *, update: bool) -> None:
    rng = person.rng
    city = rng.choice([c for c in lx.CITIES if c not in person.cities])
    old = person.cities[-1] if person.cities else None
    person.cities.append(city)
    if update and old is not None:
        text = rng.choice((f"Кстати, я переехал{person.g('', 'а')} в {city.accusative}, доставку теперь туда.",
                           f"Поправка: я живу уже не в {old.prepositional}, а в {city.prepositional}."))  # fmt: skip
    else:
        text = rng.choice((f"Я живу в {city.prepositional}.", f"Доставка нужна в {city.accusative}.",
                           f"Мы в {city.prepositional} живём, если это важно для доставки."))  # fmt: skip
    person.say(text, rng.choice(SUPPORT_ACK), ("city", city.nominative))


def follow_up(person: Person, order: Order) -> None:
    rng = person.rng
    text = rng.choice((f"Есть новости по заказу {order.number}?", f"Что с моим заказом {order.number}?",
                       f"Хотел{person.g('', 'а')} уточнить статус заказа {order.number}."))  # fmt: skip
    person.say(text, "Заявка на рассмотрении, специалист скоро ответит.", ("order", order.number))


def small_talk(person: Person, count: int) -> None:
    """`count` lines of small talk; within a session each pair at most once until all were used."""
    pool: list[tuple[str, str]] = []
    for _ in range(count):
        if not pool:
            pool = list(SMALL_TALK)
            person.rng.shuffle(pool)
        text, reply = pool.pop()
        person.say(_fill(text, person), reply)


# --- one customer ------------------------------------------------------------------------------


def make_person(index: int, rng: random.Random, taken: set[str]) -> Person:
    female = index % 2 == 0
    name = (FEMALE if female else MALE)[(index // 2) % 20]
    person = Person(f"c{index + 1:02d}", name, female, rng)
    products = rng.sample(PRODUCTS, 3)
    person.orders = [Order(_order_number(rng, taken), product, _problem(product, rng)) for product in products]
    return person


def write_person(person: Person) -> None:
    """Sessions: an opening, later visits with new orders and changed contacts, maybe a forget.

    A forget never falls in the last session: what follows it shows what was (not) kept."""
    rng = person.rng
    sessions = rng.randint(3, 8)
    orders = person.orders[: rng.choice((1, 2, 2, 3, 3))]
    per_session = max(3, rng.randint(20, 200) // sessions)
    forget_session = rng.randint(1, sessions - 2) if rng.random() < 0.3 else None
    order_sessions = [0, *sorted(rng.sample(range(1, sessions), len(orders) - 1))]
    gives = {"phone": rng.random() < 0.85, "email": rng.random() < 0.6, "city": rng.random() < 0.65}
    updates = {kind: rng.randint(2, sessions - 1) if rng.random() < 0.45 else None for kind in gives}
    for session in range(sessions):
        person.add_session()
        person.say(_fill(rng.choice(GREETINGS if session == 0 else RETURNING), person), "Здравствуйте! Слушаю вас.")
        if not person.name_said and (session == 0 or rng.random() < 0.5):
            introduce_name(person)
        for order, at in zip(orders, order_sessions):
            if at == session:
                introduce_order(person, order, long_letter=rng.random() < 0.3)
        if session == 0 and gives["phone"]:
            correct_phone(person) if rng.random() < 0.2 else give_phone(person, update=False)
        if session == 1 and gives["email"]:
            give_email(person, update=False)
        if session <= 1 and gives["city"] and not person.cities:
            give_city(person, update=False)
        live = {kind for kind, _ in person.said}
        if updates["phone"] == session and "phone" in live:
            give_phone(person, update=True)
        if updates["email"] == session and "email" in live:
            give_email(person, update=True)
        if updates["city"] == session and "city" in live:
            give_city(person, update=True)
        known = [o for o, at in zip(orders, order_sessions) if at < session and ("order", o.number) in person.said]
        if known and rng.random() < 0.6:
            follow_up(person, rng.choice(known))
        small_talk(person, max(0, per_session - len(person.sessions[-1]["turns"]) - 1))
        if session == forget_session:
            person.forget()
        else:
            person.say(rng.choice(CLOSINGS), "Всего доброго!")
    person.orders = orders


# --- questions ---------------------------------------------------------------------------------


def _forms_of_product(product_name: str) -> list[str]:
    product = next(p for p in lx.PRODUCTS if p.nominative == product_name)
    return sorted({product.nominative, product.genitive, product.accusative, product.instrumental,
                   product.prepositional})  # fmt: skip


def _forms(kind: str, value: str) -> list[str]:
    if kind == "product":
        return _forms_of_product(value)
    if kind == "city":
        return list(next(c for c in lx.CITIES if c.nominative == value).forms)
    return [value]


def _evidence(person: Person, keys: list[tuple[str, str]], pool: dict) -> list[dict]:
    found = []
    for kind, value in keys:
        for session, turn in pool.get((kind, value), [])[:1]:  # the first statement is the evidence
            found.append({"session": session, "turn": turn, "kind": kind, "value": value, "forms": _forms(kind, value)})
    return found


def _latest(person: Person, kind: str) -> tuple[str, list[dict]] | None:
    """The value stated last (after any forget) and the turn that stated it."""
    best = None
    for (k, value), where in person.said.items():
        if k == kind:
            last = max(where)
            if best is None or last > best[1]:
                best = (value, last)
    if best is None:
        return None
    value, (session, turn) = best
    return value, [{"session": session, "turn": turn, "kind": kind, "value": value, "forms": _forms(kind, value)}]


def _with(product: lx.Noun) -> str:
    """«с монитором», «со смартфоном», «со стиральной машиной»."""
    word = product.instrumental
    cluster = word[0] in "сзшж" and word[1] not in "аеёиоуыэюя"
    return f"{'со' if cluster else 'с'} {word}"


def make_questions(person: Person) -> list[dict]:
    rng = person.rng
    said = person.said
    questions: list[dict] = []
    verb = person.g("заказывал", "заказывала")

    def add(category: str, text: str, expected: list[tuple[str, str]], evidence: list[dict], *,
            rejected: list[tuple[str, str]] = (), abstain: bool = False) -> None:  # fmt: skip
        questions.append({
            "id": f"{person.cid}-q{len(questions) + 1}", "category": category, "text": text,
            "expected": [_forms(kind, value) for kind, value in expected],
            "rejected": [_forms(kind, value) for kind, value in rejected], "abstain": abstain,
            "evidence": evidence,
        })  # fmt: skip

    live_orders = [o for o in person.orders if ("order", o.number) in said]
    # single session: the name, a contact said once, an order's product and a product's order
    if person.name_said:
        add("single_session", "Как меня зовут?", [("name", person.name)], _evidence(person, [("name", person.name)], said))
    for kind, values, text in (("phone", person.phones, "Какой у меня номер телефона?"),
                               ("email", person.emails, "Напомните, пожалуйста, мой e-mail?"),
                               ("city", [c.nominative for c in person.cities], "В каком городе я живу?")):  # fmt: skip
        live = [v for v in dict.fromkeys(values) if (kind, v) in said]
        first_statements = {min(said[(kind, v)]) for v in live}
        if len(live) == 1 and len(first_statements) == 1:
            add("single_session", text, [(kind, live[0])], _evidence(person, [(kind, live[0])], said))
        elif len(live) > 1:
            value, evidence = _latest(person, kind)
            update_text = {"phone": "Какой у меня сейчас номер телефона?", "email": "Какая у меня сейчас почта?",
                           "city": "В каком городе я сейчас живу?"}[kind]  # fmt: skip
            add("update", update_text, [(kind, value)], evidence, rejected=[(kind, v) for v in live if v != value])
    if live_orders:
        order = rng.choice(live_orders)
        add("single_session", f"Что было в заказе {order.number}?", [("product", order.product.nominative)],
            _evidence(person, [("product", order.product.nominative)], said))
        order = rng.choice(live_orders)
        add("single_session", f"Какой номер у заказа {_with(order.product)}?", [("order", order.number)],
            _evidence(person, [("order", order.number)], said))
    # several sessions: every product, every order number
    if len(live_orders) >= 2:
        products = [("product", o.product.nominative) for o in live_orders]
        add("multi_session", f"Какие товары я у вас {verb}?", products, _evidence(person, products, said))
        numbers = [("order", o.number) for o in live_orders]
        add("multi_session", f"Какие номера заказов я вам называл{person.g('', 'а')}?", numbers,
            _evidence(person, numbers, said))
        # order in time: the first and the last product, the first order's number
        first, last = live_orders[0], live_orders[-1]
        others = [("product", o.product.nominative) for o in live_orders[1:]]
        add("temporal", f"Какой товар я {person.g('заказал', 'заказала')} первым?", [("product", first.product.nominative)],
            _evidence(person, products, said), rejected=others)
        add("temporal", f"Какой товар я {person.g('заказал', 'заказала')} последним?",
            [("product", last.product.nominative)], _evidence(person, products, said),
            rejected=[("product", o.product.nominative) for o in live_orders[:-1]])
        add("temporal", "Какой номер был у моего первого заказа?", [("order", first.number)],
            _evidence(person, numbers, said), rejected=[("order", o.number) for o in live_orders[1:]])
    # abstention: what was never said (and an order of a product never bought)
    never = [kind for kind, values in (("phone", person.phones), ("email", person.emails),
                                       ("city", person.cities)) if not values]  # fmt: skip
    texts = {"phone": "Какой у меня номер телефона?", "email": "Напомните, пожалуйста, мой e-mail?",
             "city": "В каком городе я живу?"}  # fmt: skip
    for kind in never[:2]:
        add("abstention", texts[kind], [], [], abstain=True)
    bought = {o.product.nominative for o in person.orders}
    stranger = rng.choice([p for p in PRODUCTS if p.nominative not in bought])
    add("abstention", f"Какой номер у заказа {_with(stranger)}?", [], [], abstain=True,
        rejected=[("order", o.number) for o in live_orders])
    # forgotten: asked about what was erased and never said again
    if person.forgot_at is not None:
        for kind, text in (("phone", "Какой у меня номер телефона?"), ("email", "Напомните, пожалуйста, мой e-mail?"),
                           ("city", "В каком городе я живу?"), ("order", "Какие номера заказов я вам называл?")):  # fmt: skip
            gone = [value for (k, value) in person.erased if k == kind and (k, value) not in said]
            if gone and not any(k == kind for (k, _) in said):
                if kind == "order":
                    text = f"Какие номера заказов я вам называл{person.g('', 'а')}?"
                add("forgotten", text, [], [], abstain=True, rejected=[(kind, value) for value in gone])
    return questions


def generate(seed: int = SEED, customers: int = CUSTOMERS) -> dict:
    rng = random.Random(seed)
    taken: set[str] = set()
    people = []
    for index in range(customers):
        person = make_person(index, random.Random(rng.getrandbits(64)), taken)
        write_person(person)
        people.append({
            "id": person.cid, "name": person.name, "gender": "f" if person.female else "m",
            "sessions": person.sessions, "questions": make_questions(person),
        })  # fmt: skip
    return {
        "format": 1,
        "title": "Память чата поддержки: синтетические клиенты курса",
        "description": "Клиенты службы поддержки и их вопросы о прошлых разговорах. Написано для курса "
        "генератором с фиксированным зерном (course_lib/memory_eval/generate.py); совпадения с реальными "
        "людьми, номерами и адресами случайны.",
        "seed": seed,
        "categories": list(CATEGORIES),
        "customers": people,
    }


def dump(data: dict) -> str:
    """JSON with one line per turn and per question: readable, and a change shows as a line."""

    def line(value) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))

    customers = []
    for customer in data["customers"]:
        sessions = ",\n".join(
            f'    {{"id": {line(s["id"])}, "day": {s["day"]}, "turns": [\n'
            + ",\n".join(f"     {line(turn)}" for turn in s["turns"]) + "\n    ]}"
            for s in customer["sessions"]
        )
        questions = ",\n".join(f"    {line(q)}" for q in customer["questions"])
        head = ", ".join(f"{line(key)}: {line(customer[key])}" for key in ("id", "name", "gender"))
        customers.append(f'  {{{head},\n   "sessions": [\n{sessions}\n   ],\n   "questions": [\n{questions}\n   ]}}')
    head = ",\n".join(f" {line(key)}: {line(value)}" for key, value in data.items() if key != "customers")
    return "{\n" + head + ',\n "customers": [\n' + ",\n".join(customers) + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.memory_eval.generate")
    parser.add_argument("--check", action="store_true", help="не писать файл, а сверить его с генератором")
    args = parser.parse_args(argv)
    text = dump(generate())
    if args.check:
        same = DATASET_PATH.exists() and DATASET_PATH.read_text(encoding="utf-8") == text
        print("Набор данных совпадает с генератором." if same else f"{DATASET_PATH} отличается от генератора.")
        return 0 if same else 1
    DATASET_PATH.write_text(text, encoding="utf-8")
    print(f"Записано: {DATASET_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
