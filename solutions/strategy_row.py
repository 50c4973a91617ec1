"""Reference solution for exercises/strategy_row.py (the statement lives in the stub)."""

from collections.abc import Callable

TOKENS_PER_MESSAGE = 3
REPLY_PRIMER_TOKENS = 3


def _valid_message(message: object) -> bool:
    return (
        isinstance(message, dict)
        and isinstance(message.get("role"), str)
        and isinstance(message.get("content"), str)
    )


def _mentions(request: list[dict], markers: list[str]) -> bool:
    texts = [m["content"].lower() for m in request if m["role"] != "system" and m["role"] != "developer"]
    return any(marker.lower() in text for text in texts for marker in markers)


def strategy_row(
    requests: list[list[dict]],
    facts: dict[str, list[str]],
    count_tokens: Callable[[str], int],
) -> dict:
    if not isinstance(requests, list):
        raise TypeError("requests должен быть списком запросов")
    if len(requests) == 0:
        raise ValueError("нет ни одного запроса")
    if not isinstance(facts, dict):
        raise TypeError("facts должен быть словарём")
    for name, markers in facts.items():
        if not isinstance(name, str) or not isinstance(markers, list) or len(markers) == 0:
            raise TypeError("у факта — имя-строка и непустой список признаков")
        if not all(isinstance(marker, str) for marker in markers):
            raise TypeError("признак факта должен быть строкой")
        if any(marker.strip() == "" for marker in markers):
            raise ValueError("пустой признак факта")
    for turn, request in enumerate(requests, start=1):
        if not isinstance(request, list):
            raise ValueError(f"ход {turn}: запрос должен быть списком сообщений")
        for index, message in enumerate(request, start=1):
            if not _valid_message(message):
                raise ValueError(f"ход {turn}, сообщение {index}: нужны строки role и content")

    per_turn = []
    for request in requests:
        total = REPLY_PRIMER_TOKENS
        for message in request:
            total += TOKENS_PER_MESSAGE + count_tokens(message["role"]) + count_tokens(message["content"])
        per_turn.append(total)

    peak_turn = 1
    for turn in range(2, len(per_turn) + 1):
        if per_turn[turn - 1] > per_turn[peak_turn - 1]:
            peak_turn = turn

    last = requests[-1]
    kept = [name for name in facts if _mentions(last, facts[name])]
    lost_at = {}
    for name in facts:
        if name in kept:
            continue
        seen = [turn for turn, request in enumerate(requests, start=1) if _mentions(request, facts[name])]
        if seen:
            lost_at[name] = seen[-1] + 1

    return {
        "total_tokens": sum(per_turn),
        "peak_tokens": per_turn[peak_turn - 1],
        "peak_turn": peak_turn,
        "last_tokens": per_turn[-1],
        "facts_kept": kept,
        "lost_at": lost_at,
    }
