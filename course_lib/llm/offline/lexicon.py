"""The offline model's vocabulary: products, parts, damage words and the canonical phrases of facts.

Everything here is data. Patterns are matched against text that was lower-cased and had "ё" replaced
by "е" (see `normalize`); canonical phrases are what the model writes back, and each of them is also
matched by its own patterns, so a summary the model wrote can be read again without loss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def normalize(text: str) -> str:
    """Lower-case and "ё" → "е"; the length stays the same, so match offsets fit the original."""
    return text.lower().replace("ё", "е")


@dataclass(frozen=True)
class Noun:
    """A product or a part with the forms the replies need."""

    nominative: str
    genitive: str
    accusative: str
    instrumental: str
    prepositional: str
    gender: str  # "m", "f", "n" or "pl"
    pattern: re.Pattern[str]
    mains_powered: bool = False

    def participle(self, masculine: str) -> str:
        """Agree a short participle with the noun: ("повреждён", f) → "повреждена"."""
        if self.gender == "m":
            return masculine
        stem = masculine[:-2] + "ен" if masculine.endswith("ён") else masculine
        ending = {"f": "а", "n": "о", "pl": "ы"}[self.gender]
        return stem + ending


def _noun(
    forms: str, gender: str, pattern: str, mains_powered: bool = False
) -> Noun:
    nominative, genitive, accusative, instrumental, prepositional = forms.split("|")
    return Noun(
        nominative, genitive, accusative, instrumental, prepositional, gender,
        re.compile(pattern), mains_powered,
    )


PRODUCTS: tuple[Noun, ...] = (
    _noun("кофемашина|кофемашины|кофемашину|кофемашиной|кофемашине", "f", r"\bкофемашин\w*", True),
    _noun("кофеварка|кофеварки|кофеварку|кофеваркой|кофеварке", "f", r"\bкофеварк\w*", True),
    _noun("монитор|монитора|монитор|монитором|мониторе", "m", r"\bмонитор\w*", True),
    _noun("клавиатура|клавиатуры|клавиатуру|клавиатурой|клавиатуре", "f", r"\bклавиатур\w*"),
    _noun("ноутбук|ноутбука|ноутбук|ноутбуком|ноутбуке", "m", r"\bноутбук\w*"),
    _noun("наушники|наушников|наушники|наушниками|наушниках", "pl", r"\bнаушник\w*"),
    _noun("смартфон|смартфона|смартфон|смартфоном|смартфоне", "m", r"\bсмартфон\w*"),
    # "по телефону", "номер телефона", "телефон: +7 …" are about contacting the customer, not
    # about a product.
    _noun(
        "телефон|телефона|телефон|телефоном|телефоне", "m",
        r"(?<!по )(?<!на )(?<!номер )(?<!номера )\bтелефон(?:а|у|ом|е|ы|ов)?\b(?![\s:—-]*(?:\+7|8)[\s(]*\d)",
    ),
    _noun("чайник|чайника|чайник|чайником|чайнике", "m", r"\bчайник\w*", True),
    _noun("пылесос|пылесоса|пылесос|пылесосом|пылесосе", "m", r"\bпылесос\w*", True),
    _noun("принтер|принтера|принтер|принтером|принтере", "m", r"\bпринтер\w*", True),
    _noun("планшет|планшета|планшет|планшетом|планшете", "m", r"\bпланшет\w*"),
    _noun("телевизор|телевизора|телевизор|телевизором|телевизоре", "m", r"\bтелевизор\w*", True),
    _noun(
        "микроволновка|микроволновки|микроволновку|микроволновкой|микроволновке", "f",
        r"\bмикроволнов\w*", True,
    ),
    _noun(
        "холодильник|холодильника|холодильник|холодильником|холодильнике", "m",
        r"\bхолодильник\w*", True,
    ),
    _noun(
        "стиральная машина|стиральной машины|стиральную машину|стиральной машиной|"
        "стиральной машине", "f", r"\bстиральн\w*\s+машин\w*|\bстиралк\w*", True,
    ),
    _noun("мультиварка|мультиварки|мультиварку|мультиваркой|мультиварке", "f", r"\bмультиварк\w*", True),
    _noun("блендер|блендера|блендер|блендером|блендере", "m", r"\bблендер\w*", True),
    _noun("утюг|утюга|утюг|утюгом|утюге", "m", r"\bутюг\w*", True),
    _noun("фен|фена|фен|феном|фене", "m", r"\bфен(?:а|у|ом|е|ы)?\b", True),
    _noun("роутер|роутера|роутер|роутером|роутере", "m", r"\bроутер\w*|\bмаршрутизатор\w*", True),
    _noun("колонка|колонки|колонку|колонкой|колонке", "f", r"\bколонк\w*"),
    _noun("мышь|мыши|мышь|мышью|мыши", "f", r"\bмыш(?:ь|и|ью|ка|ки|ку|кой)\b"),
)

PARTS: tuple[Noun, ...] = (
    _noun("подставка|подставки|подставку|подставкой|подставке", "f", r"\bподставк\w*"),
    _noun("экран|экрана|экран|экраном|экране", "m", r"\bэкран\w*"),
    _noun("дисплей|дисплея|дисплей|дисплеем|дисплее", "m", r"\bдиспле\w*"),
    _noun("корпус|корпуса|корпус|корпусом|корпусе", "m", r"\bкорпус\w*"),
    _noun("кабель|кабеля|кабель|кабелем|кабеле", "m", r"\bкабел\w*"),
    _noun("шнур|шнура|шнур|шнуром|шнуре", "m", r"\bшнур\w*"),
    _noun("крышка|крышки|крышку|крышкой|крышке", "f", r"\bкрышк\w*"),
    _noun("ножка|ножки|ножку|ножкой|ножке", "f", r"\bножк\w*"),
    _noun("ручка|ручки|ручку|ручкой|ручке", "f", r"\bручк\w*"),
    _noun("дверца|дверцы|дверцу|дверцей|дверце", "f", r"\bдверц\w*"),
    _noun("колба|колбы|колбу|колбой|колбе", "f", r"\bколб\w*"),
    _noun("клавиша|клавиши|клавишу|клавишей|клавише", "f", r"\bклавиш\w*"),
    _noun("стекло|стекла|стекло|стеклом|стекле", "n", r"\bстекл\w*"),
)

# Things that can be missing from the box: "пришла без кабеля", "в комплекте нет пульта".
_MISSING = r"\b(?:без|нет|не\s+хватает|не\s+положили|отсутству\w*)\s+(?:в\s+комплекте\s+)?(?:\w+\s+)?"
MISSING_ITEMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (genitive, re.compile(_MISSING + "(?:" + pattern + ")"))
    for genitive, pattern in (
        ("кабеля", r"кабел\w*"),
        ("пульта", r"пульт\w*"),
        ("зарядного устройства", r"зарядн\w*(?:\s+устройств\w*)?|зарядк\w*"),
        ("блока питания", r"блок\w*\s+питания"),
        ("инструкции", r"инструкци\w*"),
        ("подставки", r"подставк\w*"),
    )
)

# Damage: the noun a summary writes, and how the customer may say it.
DAMAGE_NOUNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("трещина", re.compile(r"\bтрещин\w*|\bтресн\w*|\bтреснут\w*")),
    ("царапина", re.compile(r"\bцарапин\w*|\bпоцарапа\w*")),
    ("скол", re.compile(r"\bскол(?:ы|ов|а|ом|от|ота|оты)?\b")),
    ("вмятина", re.compile(r"\bвмятин\w*|\bпомят\w*")),
)
# Damage said with a participle: "разбит экран", "сломана ножка".
DAMAGE_PARTICIPLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("разбит", re.compile(r"\bразбит\w*|\bразбил\w*")),
    ("сломан", re.compile(r"\bсломан\w*|\bотломан\w*|\bотломил\w*|\bотвалил\w*")),
)
GENERIC_DAMAGE = re.compile(r"\bповрежд\w*|\bповредил\w*")
NO_DAMAGE = re.compile(
    r"\bнет\b|\bне\s+(?:поврежд|тресн|разбит|сломан|поцарап)\w*"
    r"|\bбез\s+(?:поврежд|царапин|трещин|скол|вмятин)\w*|\bцел\w*"
)
BOX = re.compile(r"\b(?:коробк|упаковк)\w*")

# Problems that are not damage: canonical phrase, pattern, kind of trouble.
PROBLEMS: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (phrase, re.compile(pattern), kind)
    for phrase, pattern, kind in (
        ("не включается", r"\bне\s+включа\w*|\bне\s+включил\w*", "power"),
        ("не запускается", r"\bне\s+запуска\w*|\bне\s+запустил\w*", "power"),
        ("не заряжается", r"\bне\s+заряжа\w*", "power"),
        ("не работает", r"\bне\s+работа\w*|\bперестал\w*\s+работать|\bсломал(?:ся|ась|ось|ись)\b", "power"),
        ("не нагревается", r"\bне\s+(?:нагрева\w*|греет|грее\w*)", "other"),
        ("шумит", r"\bшумит|\bшумно|\bгудит|\bсильно\s+шум\w*", "other"),
        ("протекает", r"\bпротека\w*|\bтечет|\bподтека\w*", "other"),
        ("нет изображения", r"\bнет\s+изображения|\bне\s+показыва\w*|\bчерный\s+экран", "other"),
        ("нет звука", r"\bнет\s+звука|\bне\s+слышно", "other"),
        ("не печатает", r"\bне\s+печата\w*", "other"),
        (
            "прислали не тот товар",
            r"\bне\s+тот\s+товар|\bприслали\s+не\s+то\b|\bпришел\s+не\s+тот|\bпришла\s+не\s+та\b",
            "other",
        ),
        (
            "заказ не доставлен",
            r"\bне\s+(?:доставил\w*|доставлен\w*|привезли)|"
            r"\b(?:заказ|посылк|товар)\w*\s+(?:№?\s*\d+\s+)?(?:еще\s+|так\s+и\s+|до\s+сих\s+пор\s+)?"
            r"не\s+(?:пришел|пришла|пришло)",
            "delivery",
        ),
    )
)
MISSING_ITEM_PROBLEM = "в комплекте нет {item}"
# Problems said with a verb: they follow the product directly ("кофемашина не включается").
VERB_PROBLEMS = frozenset(
    {"не включается", "не запускается", "не заряжается", "не работает", "не нагревается", "шумит",
     "протекает", "не печатает"}
)

# Checks and actions already done: key, canonical phrase, pattern. One phrase per key is kept.
CHECKS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (key, phrase, re.compile(pattern))
    for key, phrase, pattern in (
        ("sockets", "проверены две розетки", r"\b(?:две|2|обе|оба)\s+розет\w*"),
        (
            "sockets", "проверено несколько розеток",
            r"\b(?:несколько|разны\w*|три|3)\s+розет\w*",
        ),
        ("sockets", "проверена другая розетка", r"\bдруг\w*\s+розет\w*"),
        # "Проверил розетку" says the socket was checked, not that another one was tried.
        ("sockets", "розетка проверена", r"\bпровер\w*\s+(?:\w+\s+)?розетк\w*|\bрозетк\w*\s+(?:\w+\s+)?провер\w*"),
        (
            "fuse", "предохранитель заменён",
            r"\b(?:поменял|заменил|сменил|поставил\s+нов)\w*\s+(?:\w+\s+)?предохранител\w*"
            r"|\bпредохранител\w*\s+(?:\w+\s+)?(?:поменял|заменил|заменен|заменён|поменян|сменил)\w*",
        ),
        (
            "cable", "кабель подключен плотно",
            r"\b(?:кабел|шнур|провод|вилк)\w*\s+(?:\w+\s+){0,2}(?:подключ|вставл|воткнут|сид)\w*\s+"
            r"(?:\w+\s+)?(?:плотно|надежно|до\s+конца|правильно)"
            r"|\b(?:плотно|надежно)\s+(?:подключ|вставил|воткнул)\w*",
        ),
        (
            "indicators", "индикаторы не горят",
            r"\bиндикатор\w*\s+(?:\w+\s+)?не\s+(?:гор|свет|мига)\w*"
            r"|\bне\s+(?:гор|свет|мига)\w*\s+(?:\w+\s+){0,2}индикатор\w*",
        ),
        (
            "box", "коробка целая",
            r"\b(?:коробк|упаковк)\w*\s+(?:\w+\s+)?(?:цел\w*|без\s+повреждений|не\s+поврежд\w*)",
        ),
        ("box", "коробка повреждена", r"\b(?:коробк|упаковк)\w*\s+(?:\w+\s+)?(?:поврежд|помят|порван|разорван)\w*"),
        (
            "photo", "фото повреждения сделано",
            r"\bфото\w*\s+(?:\w+\s+){0,2}(?:сделал|сделан|снял|есть|готов)\w*"
            r"|\b(?:сделал|снял)\w*\s+(?:\w+\s+)?фото\w*|\bсфотографировал\w*",
        ),
        (
            "first_contact", "обращение первое",
            r"\bвпервые\s+обраща\w*|\bобраща\w*\s+(?:\w+\s+){0,3}впервые|\bпервый\s+раз\s+обраща\w*"
            r"|\bобращение\s+первое|\b(?:раньше|ранее)\s+не\s+обращал\w*",
        ),
        (
            "product_intact", "сам товар без повреждений",
            r"\bсам(?:ом|ой|а|о|и|ый|ая|ое)?\s+\w+\s+(?:повреждений\s+нет|без\s+повреждений|не\s+поврежд\w*|цел\w*)",
        ),
        ("restart", "устройство перезагружено", r"\bперезагрузил\w*|\bперезапустил\w*|\bперезагружен\w*"),
        ("charged", "устройство заряжено", r"\bзарядил\w*|\bпоставил\w*\s+на\s+зарядк\w*|\bустройство\s+заряжено"),
        (
            "manual", "инструкция прочитана",
            r"\bпрочитал\w*\s+(?:\w+\s+)?инструкци\w*|\bпрочел\s+инструкци\w*|\bинструкци\w*\s+прочитан\w*",
        ),
    )
)

# Check kinds that describe what the customer observed, not something they did: a summary files
# them as "Установлено", not "Уже сделано".
STATE_CHECK_KEYS = frozenset({"indicators", "box", "product_intact", "first_contact"})

# Preferences: key, canonical phrase, pattern. A contact channel counts only next to a wish.
CONTACT_WISH = re.compile(
    r"\bпредпочита\w*|\bудобнее|\bудобно|\bлучше|\bпрошу|\bсвяж\w*|\bсвяза\w*|\bсвязь"
    r"|\bпишите|\bнапишите|\bзвоните|\bпозвоните|\bпожелани\w*"
)
CONTACT_CHANNELS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "связь по электронной почте",
        re.compile(r"\bпо\s+(?:электронной\s+)?почте|\bпо\s+e-?mail|\bна\s+(?:электронную\s+)?почту|\bпо\s+имейлу"),
    ),
    ("связь по телефону", re.compile(r"\bпо\s+телефону|\bпозвоните|\bзвонком")),
    ("связь в мессенджере", re.compile(r"\bв\s+мессенджере|\bв\s+телеграм\w*|\bв\s+whatsapp")),
    ("связь в чате", re.compile(r"\bв\s+(?:этом\s+)?чате|\bперепиской")),
)
RESOLUTION_WISH = re.compile(
    r"\bхочу|\bхотел\w*|\bпрошу|\bнужн\w*|\bпредпочита\w*|\bлучше|\bпожелани\w*|\bрассчитываю"
)
RESOLUTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("замена товара", re.compile(r"\bзамен\w*|\bобмен\w*|\bзаменить")),
    ("возврат денег", re.compile(r"\bвозврат\w*|\bвернуть\s+(?:\w+\s+)?(?:деньги|товар|средства)|\bвернуть\b")),
    ("ремонт", re.compile(r"\bремонт\w*|\bпочинить")),
)
PREFERENCE_KEYS = {phrase: "contact" for phrase, _ in CONTACT_CHANNELS} | {
    phrase: "resolution" for phrase, _ in RESOLUTIONS
}

# What the customer asks about; also kept as the open question of a summary.
TOPICS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (key, phrase, re.compile(pattern))
    for key, phrase, pattern in (
        (
            "prepare", "что подготовить для обращения",
            r"\bчто\s+(?:мне\s+)?(?:нужно\s+|надо\s+|стоит\s+)?подготовить|\bкакие\s+документы",
        ),
        (
            "delivery", "сроки доставки",
            r"\bкогда\s+(?:\w+\s+){0,3}(?:достав|привез|придет)\w*|\bсроки\s+доставки|\bгде\s+(?:мой\s+)?заказ",
        ),
        (
            "return", "возможность возврата или замены",
            r"\bможно\s+ли\s+(?:\w+\s+)?(?:вернуть|обменять|заменить)"
            r"|\bкак\s+(?:\w+\s+)?(?:вернуть|обменять|оформить\s+возврат)"
            r"|\bвозможность\s+возврата",
        ),
        ("warranty", "условия гарантии", r"\bгаранти\w*"),
        ("next", "что делать дальше", r"\bчто\s+(?:мне\s+)?(?:теперь\s+)?делать|\bчто\s+дальше|\bкак\s+быть"),
    )
)

# Attempts to change the assistant's rules. In the current message they are refused; anywhere else
# they are only data. The summary notes them with RULE_CHANGE_NOTE, which RULE_CHANGE_PATTERNS read back.
OVERRIDE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\bигнорир\w*\s+(?:\w+\s+){0,3}(?:правил|инструкц|указани|ограничени)\w*",
        r"\bзабуд\w*\s+(?:\w+\s+){0,3}(?:правил|инструкц|указани|ограничени)\w*",
        r"\bзабудь\s+вс[её]",
        r"\bне\s+(?:соблюдай|следуй|слушай)\w*\s+(?:\w+\s+){0,2}(?:правил|инструкц)\w*",
        r"\b(?:отмени|отключи|сними|обойди)\w*\s+(?:\w+\s+){0,2}(?:правил|ограничени)\w*",
        r"\bты\s+теперь\b|\bтеперь\s+ты\b|\bотныне\s+ты\b",
        r"\bнов\w+\s+(?:правила|инструкции)",
        r"\b(?:покажи|выведи|раскрой|повтори)\w*\s+(?:\w+\s+){0,2}(?:системн\w*|developer)\s*"
        r"(?:промпт|инструкц|сообщени)\w*",
        r"\bignore\s+(?:\w+\s+){0,3}(?:instructions|rules|prompts?)",
        r"\bdisregard\s+(?:\w+\s+){0,3}(?:instructions|rules)",
        r"\bforget\s+(?:\w+\s+){0,3}(?:instructions|rules)",
        r"\byou\s+are\s+now\b",
    )
)
RULE_CHANGE_NOTE = "просьба клиента изменить правила отклонена"
RULE_CHANGE_PATTERNS = (
    *OVERRIDE_PATTERNS,
    re.compile(r"\b(?:просил\w*|просьба)\s+(?:\w+\s+)?изменить\s+правила"),
)


@dataclass(frozen=True)
class City:
    """A city the customer lives in or wants deliveries to, with the forms that follow «в»."""

    nominative: str
    prepositional: str
    accusative: str
    pattern: re.Pattern[str]
    """«в Казани» / «в Казань»: the preposition and a prepositional or accusative form."""
    any_form: re.Pattern[str]

    @property
    def forms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.nominative, self.prepositional, self.accusative)))


def _city(forms: str) -> City:
    written = forms.split("|")
    names = [normalize(form) for form in written]
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    accusative = written[2] if len(written) > 2 else written[0]
    return City(
        written[0], written[1], accusative,
        re.compile(rf"\bво?\s+(?:{alternatives})\b"), re.compile(rf"\b(?:{alternatives})\b"),
    )


# Nominative first, then the forms after «в» (prepositional, accusative when it differs).
CITIES: tuple[City, ...] = tuple(
    _city(forms)
    for forms in (
        "Казань|Казани", "Москва|Москве|Москву", "Самара|Самаре|Самару", "Пермь|Перми", "Тверь|Твери",
        "Омск|Омске", "Томск|Томске", "Воронеж|Воронеже", "Тула|Туле|Тулу", "Екатеринбург|Екатеринбурге",
        "Новосибирск|Новосибирске", "Ярославль|Ярославле", "Калуга|Калуге|Калугу", "Уфа|Уфе|Уфу",
        "Иркутск|Иркутске", "Саратов|Саратове", "Владимир|Владимире", "Рязань|Рязани",
    )
)
