"""The course's version of `score_answer` (notebook 10): is a reply the right answer to a memory question?"""

import re

ABSTENTION_MARKERS = (
    "не знаю", "не вижу", "не нашел", "не нашла", "не помню", "не могу сказать", "не могу назвать",
    "нет данных", "нет сведений", "нет информации", "памяти нет", "ничего нет", "не указ", "не сообщал",
    "не называл", "неизвестн",
)
_PHONE = re.compile(r"(?<![\d+])(?:(?:\+7|8)[\s\-()]*|(?=9))(\d{3})[\s\-()]*(\d{3})[\s\-]*(\d{2})[\s\-]*(\d{2})(?!\d)")


def normalize_answer(text):
    """Lower case, «ё» → «е», phones as «+7XXXXXXXXXX», no «№»/«#» before numbers, single spaces."""
    text = text.lower().replace("ё", "е")
    text = _PHONE.sub(lambda m: "+7" + "".join(m.groups()), text)
    text = re.sub(r"[№#]\s*(?=\d)", "", text)
    return " ".join(text.split())


def _stands_in(form, text):
    needle = normalize_answer(form)
    if not needle:
        return False
    return re.search(r"(?<![\w@.+])" + re.escape(needle) + r"(?![\w@])", text) is not None


def _check_groups(groups, what):
    if not isinstance(groups, list):
        raise ValueError(f"{what}: нужен список групп, получено {type(groups).__name__}")
    for group in groups:
        if not isinstance(group, list) or not group or not all(isinstance(f, str) and f.strip() for f in group):
            raise ValueError(f"{what}: каждая группа — непустой список непустых строк")


def score_answer(reply, expected, rejected, abstain):
    if not isinstance(reply, str):
        raise ValueError("reply должен быть строкой")
    if not isinstance(abstain, bool):
        raise ValueError("abstain должен быть True или False")
    _check_groups(expected, "expected")
    _check_groups(rejected, "rejected")
    if abstain == bool(expected):
        raise ValueError("ожидается либо отказ (abstain=True, expected пуст), либо ответ (expected не пуст)")
    text = normalize_answer(reply)
    if any(_stands_in(form, text) for group in rejected for form in group):
        return False
    if abstain:
        return any(re.search(r"(?<!\w)" + re.escape(marker), text) for marker in ABSTENTION_MARKERS)
    return all(any(_stands_in(form, text) for form in group) for group in expected)
