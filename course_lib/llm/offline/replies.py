"""The chat replies of the offline model: one to three short Russian sentences built from facts.

The reply acknowledges what the current message added, then either answers a recall question, asks
one clarifying question for the most important missing fact (order number, then product, then the
problem), or gives one next step. Ordinary replies do not repeat the order number: a number the model
"knows" must come from the request, not from its own earlier words.
"""

from __future__ import annotations

import re

from course_lib.llm.offline import intents
from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.dialogue import ChatContext
from course_lib.llm.offline.facts import Facts, part_noun, problem_kind, product_noun

REFUSAL = "Я не могу менять правила работы поддержки, но продолжу помогать с вашим вопросом."
ASK_SUBJECT = "Подскажите, пожалуйста, о каком заказе или товаре идёт речь?"
ASK_ORDER = "Подскажите, пожалуйста, номер заказа?"
ASK_PRODUCT = "Подскажите, пожалуйста, о каком товаре из заказа идёт речь?"
EMPTY_REQUEST = "Здравствуйте! Опишите, пожалуйста, ваш вопрос: номер заказа и что случилось."
THANKS = "Пожалуйста! Если появятся вопросы по заказу, напишите."
PICKUP_OFFER = "Прислать курьера, чтобы он забрал {acc}?"
_YES_NO_WORD = {"yes": "да", "no": "нет"}
_YES_NO_AGREED = {"yes": "договорились.", "no": "хорошо, не будем."}

_MISSING_WHAT = {
    "order": "номера заказа",
    "name": "вашего имени",
    "product": "названия товара",
    "damage": "сведений о повреждении",
    "problem": "описания проблемы",
    "checks": "выполненных проверок",
    "preferences": "ваших пожеланий",
}
_MISSING_QUESTION = {
    "order": ASK_ORDER,
    "name": "Подскажите, пожалуйста, как к вам обращаться?",
    "product": "Подскажите, пожалуйста, о каком товаре идёт речь?",
    "damage": "Подскажите, пожалуйста, что именно повреждено?",
    "problem": "Опишите, пожалуйста, что случилось?",
    "checks": "Что вы уже успели проверить?",
    "preferences": "Как вам удобнее получить ответ?",
}

# One next step per problem kind, in order; a step is skipped once its check was reported.
_LADDERS: dict[str, tuple[tuple[str, str], ...]] = {
    "power_mains": (
        ("sockets", "Подключите, пожалуйста, {acc} к другой розетке."),
        ("cable", "Проверьте, пожалуйста, что кабель питания подключён плотно."),
        ("indicators", "Посмотрите, пожалуйста, загорается ли индикатор на корпусе."),
    ),
    "power_battery": (
        ("charged", "Поставьте, пожалуйста, {acc} на зарядку минут на тридцать и попробуйте снова."),
        ("restart", "Попробуйте, пожалуйста, перезагрузить {acc}."),
    ),
    "damage": (
        ("photo", "Сфотографируйте, пожалуйста, повреждение и упаковку — фото понадобятся для обращения."),
    ),
}
_FINAL_STEP = {
    "power": "Похоже, нужна диагностика: оформите, пожалуйста, обращение по заказу и перечислите "
    "выполненные проверки.",
    "damage": "Оформите, пожалуйста, обращение по заказу и приложите фото повреждения — "
    "его рассмотрит специалист.",
    "missing": "Оформите, пожалуйста, обращение по заказу и укажите, чего не хватает в комплекте.",
    "delivery": "Оформите, пожалуйста, обращение по заказу, чтобы специалист уточнил статус доставки.",
    "other": "Оформите, пожалуйста, обращение по заказу с описанием проблемы — "
    "специалист подскажет дальнейшие шаги.",
}
_TOPIC_ANSWERS = {
    "delivery": "Сведений о доставке в нашем диалоге нет, поэтому дату я назвать не могу.",
    "return": "Обещать возврат или замену я не могу: решение примет специалист после "
    "рассмотрения обращения.",
    "warranty": "Условий гарантии в нашем диалоге нет, поэтому назвать их я не могу.",
}
_TOPIC_KEYS = {phrase: key for key, phrase, _ in lx.TOPICS}
_PRONOUN_ON = {"m": "нём", "f": "ней", "n": "нём", "pl": "них"}


def compose_chat_reply(context: ChatContext) -> str:
    """The model's answer to a chat request."""
    text = context.current_text
    if not text.strip():
        return EMPTY_REQUEST
    norm = lx.normalize(text)

    opening: list[str] = []
    greeted_name = None
    if intents.is_override_attempt(norm):
        opening.append(REFUSAL)
    elif intents.is_greeting(norm):
        greeted_name = context.current.customer_name
        opening.append(f"Здравствуйте, {greeted_name}!" if greeted_name else "Здравствуйте!")

    kinds = intents.recall_kinds(norm, context.current)
    if kinds:
        return _join(opening + recall_answer(kinds, context.known))
    if context.unexplained_number:
        return _join(
            opening
            + [
                f"Я вижу число {context.unexplained_number}, но не понимаю, к чему оно относится.",
                "Уточните, пожалуйста, это номер заказа и с чем нужна помощь?",
            ]
        )
    if context.yes_no:
        return _join(opening + yes_no_answer(context.yes_no, context.yes_no_question))
    if intents.is_thanks_only(norm):
        return THANKS

    acknowledgement = [] if opening and opening[0] == REFUSAL else _acknowledgement(context)
    if greeted_name:  # "Здравствуйте, Вася!" already greets by name
        acknowledgement = [s for s in acknowledgement if not s.startswith("Приятно познакомиться")]
    return _join(opening + acknowledgement + [_next_sentence(context)])


# --- recall ------------------------------------------------------------------------------------


def recall_answer(kinds: tuple[str, ...], known: Facts) -> list[str]:
    """Answer the facts that are present; for the missing ones, say so and ask one question."""
    sentences: list[str] = []
    missing: list[str] = []
    for kind in kinds:
        sentence = _recall_sentence(kind, known)
        if sentence:
            sentences.append(sentence)
        else:
            missing.append(kind)
    if missing:
        what = " и ".join(_MISSING_WHAT[kind] for kind in missing)
        sentences.append(f"Я не вижу {what} в нашем диалоге.")
        sentences.append(_MISSING_QUESTION[missing[0]])
    return sentences


def _recall_sentence(kind: str, known: Facts) -> str | None:
    if kind == "order":
        return f"Номер вашего заказа — {known.order_number}." if known.order_number else None
    if kind == "name":
        return f"Вас зовут {known.customer_name}." if known.customer_name else None
    if kind == "product":
        return f"Речь идёт о товаре: {known.product}." if known.product else None
    if kind == "damage":
        return damage_sentence(known)
    if kind == "problem":
        subject = case_subject(known)
        return f"Проблема: {subject}." if known.problem or known.damaged_part else None
    if kind == "checks":
        return f"Вы уже сообщили: {', '.join(known.checks)}." if known.checks else None
    if kind == "preferences":
        return f"Ваши пожелания: {', '.join(known.preferences)}." if known.preferences else None
    raise ValueError(f"unknown recall kind {kind!r}")


def damage_sentence(known: Facts) -> str | None:
    """"Повреждена подставка монитора: на ней трещина." — or None if nothing about damage is known."""
    part = part_noun(known.damaged_part)
    product = product_noun(known.product)
    owner = f" {product.genitive}" if product else ""
    problem = known.problem or ""
    if part:
        noun_on_part = re.match(r"^(трещина|царапина|скол|вмятина) на ", problem)
        if noun_on_part:
            return (
                f"{part.participle('Повреждён')} {part.nominative}{owner}: "
                f"на {_PRONOUN_ON[part.gender]} {noun_on_part.group(1)}."
            )
        participle = problem.split(" ", 1)[0] if problem.endswith(f" {part.nominative}") else None
        if participle:
            return f"{part.nominative.capitalize()}{owner} {participle}."
        return f"{part.participle('Повреждён')} {part.nominative}{owner}."
    if problem_kind(known.problem) == "damage":
        return f"Повреждение{owner}: {problem}."
    if known.problem:
        return f"О повреждениях вы не сообщали; проблема: {case_subject(known)}."
    return None


def yes_no_answer(answer: str, question: str | None) -> list[str]:
    """Confirm what «да» / «нет» agreed to — or, when the question is not in the request, ask."""
    word = _YES_NO_WORD[answer]
    if question:
        return [f"Вы ответили «{word}» на вопрос «{question}» — {_YES_NO_AGREED[answer]}"]
    return [
        f"Вы ответили «{word}», но я не вижу вопроса, на который это ответ.",
        "Уточните, пожалуйста, что вы имеете в виду?",
    ]


# --- acknowledgement and next step ---------------------------------------------------------------


def case_subject(facts: Facts) -> str:
    """"кофемашина не включается", "монитор — трещина на подставке", "заказ 5521 не доставлен"."""
    product = facts.product
    problem = facts.problem
    if problem == "заказ не доставлен" and facts.order_number:
        return f"заказ {facts.order_number} не доставлен"
    if problem is None and facts.damaged_part:
        part = part_noun(facts.damaged_part)
        problem = f"{part.participle('повреждён')} {part.nominative}" if part else None
    if problem in lx.VERB_PROBLEMS:
        noun = product_noun(product)
        if noun and noun.gender == "pl":
            problem = _plural_verb(problem)
        return f"{product or 'товар'} {problem}"
    if product and problem:
        return f"{product} — {problem}"
    return problem or product or "товар"


def _plural_verb(phrase: str) -> str:
    """"не заряжается" → "не заряжаются", "шумит" → "шумят" (for "наушники")."""
    for singular, plural in (("ается", "аются"), ("ется", "ются"), ("ает", "ают"), ("ит", "ят")):
        if phrase.endswith(singular):
            return phrase[: -len(singular)] + plural
    return phrase


def _is_new(context: ChatContext, field: str) -> bool:
    value = getattr(context.current, field)
    return bool(value) and value != getattr(context.earlier, field)


def _acknowledgement(context: ChatContext) -> list[str]:
    current, earlier, known = context.current, context.earlier, context.known
    sentences: list[str] = []
    if _is_new(context, "customer_name"):
        sentences.append(f"Приятно познакомиться, {current.customer_name}!")

    new_case = any(_is_new(context, f) for f in ("product", "problem", "damaged_part"))
    if new_case:
        case = case_subject(known)
        if _is_new(context, "order_number") and current.order_number not in case:
            case = f"заказ {current.order_number}, {case}"
        sentences.append(f"Понял: {case}.")
    elif _is_new(context, "order_number"):
        sentences.append(f"Спасибо, номер заказа {current.order_number} получил.")

    new_checks = [c for c in current.checks if c not in earlier.checks]
    if new_checks and len(sentences) < 2:
        sentences.append(f"Спасибо, учёл: {', '.join(new_checks)}.")
    new_preferences = [p for p in current.preferences if p not in earlier.preferences]
    if new_preferences and len(sentences) < 2:
        sentences.append(f"Записал пожелание: {', '.join(new_preferences)}.")
    return sentences


def _next_sentence(context: ChatContext) -> str:
    known = context.known
    topic = _TOPIC_KEYS.get(context.current.open_question or "")
    if not known.has_subject:
        return ASK_SUBJECT
    if intents.needs_pickup(lx.normalize(context.current_text)):
        product = product_noun(known.product)
        return PICKUP_OFFER.format(acc=product.accusative if product else "товар")
    if topic in _TOPIC_ANSWERS:  # delivery, return, warranty: the case details do not matter
        return _TOPIC_ANSWERS[topic]
    if not known.order_number:
        return ASK_ORDER
    kind = problem_kind(known.problem)
    if not known.product and kind != "delivery":
        return ASK_PRODUCT
    product = product_noun(known.product)
    if not known.problem and not known.damaged_part:
        with_what = product.instrumental if product else "товаром"
        return f"Опишите, пожалуйста, что случилось с {with_what}?"

    kind = kind or "damage"  # only a damaged part is known
    if topic == "prepare":
        return _what_to_prepare(kind, known)
    return _troubleshooting_step(kind, known, product)


def _what_to_prepare(kind: str, known: Facts) -> str:
    if kind == "damage":
        if "фото повреждения сделано" in known.checks:
            return "Для обращения понадобятся номер заказа, описание повреждения и фото — фото у вас уже есть."
        return "Для обращения подготовьте номер заказа, описание повреждения и его фото."
    if kind == "missing":
        return "Для обращения подготовьте номер заказа и перечислите, чего не хватает в комплекте."
    return "Для обращения подготовьте номер заказа, описание проблемы и список выполненных проверок."


def _troubleshooting_step(kind: str, known: Facts, product: lx.Noun | None) -> str:
    ladder_name = kind
    if kind == "power":
        ladder_name = "power_mains" if product and product.mains_powered else "power_battery"
    done = {_check_key(check) for check in known.checks}
    accusative = product.accusative if product else "устройство"
    for check_key, step in _LADDERS.get(ladder_name, ()):
        if check_key not in done:
            return step.format(acc=accusative)
    return _FINAL_STEP[kind]


def _check_key(phrase: str) -> str:
    return next((key for key, canonical, _ in lx.CHECKS if canonical == phrase), phrase)


def _join(sentences: list[str]) -> str:
    return " ".join(s for s in sentences if s)
