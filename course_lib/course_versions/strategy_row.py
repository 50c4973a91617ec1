"""The course's version of exercises/strategy_row.py (notebook 06): a strategy's run as its row of the table."""

from collections.abc import Callable

PER_MESSAGE = 3  # the wrapper tokens around every message (the rule «3 + 3» of notebook 04)
REPLY_PRIMER = 3  # the tokens that start the model's reply, once per request
INSTRUCTION_ROLES = ("system", "developer")  # the instruction does not tell the model the customer's facts


def _check_facts(facts: dict) -> None:
    if not isinstance(facts, dict):
        raise TypeError(f"facts: ожидался словарь, а не {type(facts).__name__}")
    for name, markers in facts.items():
        if not isinstance(name, str) or not isinstance(markers, list) or not markers:
            raise TypeError(f"facts[{name!r}]: ожидался непустой список признаков у строкового имени")
        for marker in markers:
            if not isinstance(marker, str):
                raise TypeError(f"facts[{name!r}]: признак — строка, а не {type(marker).__name__}")
            if not marker.strip():
                raise ValueError(f"facts[{name!r}]: пустой признак нашёлся бы в любом запросе")


def _check_request(turn: int, request: object) -> None:
    if not isinstance(request, list):
        raise ValueError(f"ход {turn}: запрос — список сообщений, а не {type(request).__name__}")
    for number, message in enumerate(request, start=1):
        if not (isinstance(message, dict) and isinstance(message.get("role"), str)
                and isinstance(message.get("content"), str)):  # fmt: skip
            raise ValueError(f"ход {turn}, сообщение {number}: ожидался словарь со строками role и content")


def request_tokens(request: list[dict], count_tokens: Callable[[str], int]) -> int:
    """The request as the model's usage counts it: «3 + 3» over role and content."""
    return REPLY_PRIMER + sum(
        PER_MESSAGE + count_tokens(message["role"]) + count_tokens(message["content"]) for message in request
    )


def facts_in(request: list[dict], facts: dict[str, list[str]]) -> list[str]:
    """The facts some message of the request states (any marker, any letter case), in facts' order."""
    said = [message["content"].lower() for message in request if message["role"] not in INSTRUCTION_ROLES]
    return [name for name, markers in facts.items() if any(m.lower() in text for m in markers for text in said)]


def strategy_row(requests: list[list[dict]], facts: dict[str, list[str]], count_tokens: Callable[[str], int]) -> dict:
    if not isinstance(requests, list):
        raise TypeError(f"requests: ожидался список запросов, а не {type(requests).__name__}")
    if not requests:
        raise ValueError("requests: нет ни одного запроса — стратегия не сделала ни одного хода")
    _check_facts(facts)
    for turn, request in enumerate(requests, start=1):
        _check_request(turn, request)

    tokens = [request_tokens(request, count_tokens) for request in requests]
    known = [facts_in(request, facts) for request in requests]
    peak = max(tokens)
    # A fact is lost on the turn after the last request that still stated it (it never came back).
    last_seen = {name: turn for turn, names in enumerate(known, start=1) for name in names}
    lost_at = {name: last_seen[name] + 1 for name in facts if name in last_seen and name not in known[-1]}
    return {
        "total_tokens": sum(tokens),
        "peak_tokens": peak,
        "peak_turn": tokens.index(peak) + 1,
        "last_tokens": tokens[-1],
        "facts_kept": known[-1],
        "lost_at": lost_at,
    }
