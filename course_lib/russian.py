"""Numbers as Russian text writes them: counts that agree with their nouns («1 токен», «3 токена»,
«11 токенов») and decimals with a comma («0,14 с», «×2,73»).

The one home of Russian plural forms in the course: notebooks, widgets, the console and reports
format counts through `plural()` or one of the shortcuts below, never with a fixed ending, and
decimals in Russian sentences through `decimal()`.
"""

from __future__ import annotations

__all__ = ["decimal", "plural", "tokens", "messages_count", "turns_count", "facts_count", "calls_count", "files_count"]


def plural_form(number: int, forms: tuple[str, str, str]) -> str:
    """The noun form for `number`: forms are (one, few, many), e.g. ("токен", "токена", "токенов")."""
    n = abs(int(number)) % 100
    if 11 <= n <= 14:
        return forms[2]
    if n % 10 == 1:
        return forms[0]
    if 2 <= n % 10 <= 4:
        return forms[1]
    return forms[2]


def plural(number: int, forms: tuple[str, str, str]) -> str:
    """"<number> <noun>": plural(1, ("токен", "токена", "токенов")) -> "1 токен"."""
    return f"{number} {plural_form(number, forms)}"


def tokens(number: int) -> str:
    return plural(number, ("токен", "токена", "токенов"))


def messages_count(number: int) -> str:
    return plural(number, ("сообщение", "сообщения", "сообщений"))


def turns_count(number: int) -> str:
    return plural(number, ("ход", "хода", "ходов"))


def facts_count(number: int) -> str:
    return plural(number, ("факт", "факта", "фактов"))


def calls_count(number: int) -> str:
    return plural(number, ("вызов", "вызова", "вызовов"))


def files_count(number: int) -> str:
    return plural(number, ("файл", "файла", "файлов"))


def decimal(value: float, digits: int | None = 2) -> str:
    """A decimal number with a comma, as a Russian sentence writes it: decimal(0.14) -> "0,14";
    `digits=None` gives the shortest form: decimal(0.2, None) -> "0,2", decimal(30.0, None) -> "30"."""
    text = format(value, "g") if digits is None else f"{value:.{digits}f}"
    return text.replace(".", ",")
