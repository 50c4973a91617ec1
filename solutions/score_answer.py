"""Reference solution: score_answer (notebook 10)."""

import re

ABSTENTION_MARKERS = (
    "не знаю", "не вижу", "не нашел", "не нашла", "не помню", "не могу сказать", "не могу назвать",
    "нет данных", "нет сведений", "нет информации", "памяти нет", "ничего нет", "не указ", "не сообщал",
    "не называл", "неизвестн",
)
PHONE = re.compile(r"(?<![\d+])(?:(?:\+7|8)[\s()-]*|(?=9))(\d{3})[\s()-]*(\d{3})[\s-]*(\d{2})[\s-]*(\d{2})(?!\d)")
NUMBER_SIGN = re.compile(r"[№#]\s*(?=\d)")


def normalize(text: str) -> str:
    text = text.lower().replace("ё", "е")
    text = PHONE.sub(lambda match: "+7" + "".join(match.groups()), text)
    text = NUMBER_SIGN.sub("", text)
    return " ".join(text.split())


def occurs(form: str, text: str) -> bool:
    needle = normalize(form)
    pattern = r"(?<![\w@.+])" + re.escape(needle) + r"(?![\w@])"
    return re.search(pattern, text) is not None


def valid_groups(groups) -> bool:
    if not isinstance(groups, list):
        return False
    for group in groups:
        if not isinstance(group, list) or not group:
            return False
        for form in group:
            if not isinstance(form, str) or not form.strip():
                return False
    return True


def score_answer(reply: str, expected: list[list[str]], rejected: list[list[str]], abstain: bool) -> bool:
    if not isinstance(reply, str):
        raise ValueError("reply — строка")
    if not isinstance(abstain, bool):
        raise ValueError("abstain — True или False")
    if not valid_groups(expected) or not valid_groups(rejected):
        raise ValueError("expected и rejected — списки непустых групп непустых строк")
    if abstain and expected:
        raise ValueError("при abstain=True список expected должен быть пуст")
    if not abstain and not expected:
        raise ValueError("при abstain=False нужен хотя бы один ожидаемый ответ")
    text = normalize(reply)
    for group in rejected:
        for form in group:
            if occurs(form, text):
                return False
    if abstain:
        return any(re.search(r"(?<!\w)" + re.escape(marker), text) for marker in ABSTENTION_MARKERS)
    return all(any(occurs(form, text) for form in group) for group in expected)
