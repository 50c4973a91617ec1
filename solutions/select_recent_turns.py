"""Reference solution for exercises/select_recent_turns.py (the statement lives in the stub)."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def select_recent_turns(
    turns: list[list[dict[str, str]]],
    turn_token_costs: list[int],
    available_tokens: int,
) -> list[dict[str, str]]:
    if len(turns) != len(turn_token_costs):
        raise ValueError("у каждого хода должна быть своя стоимость")
    for cost in turn_token_costs:
        if not _is_int(cost):
            raise TypeError("стоимость хода должна быть целым числом")
        if cost <= 0:
            raise ValueError("стоимость хода должна быть положительной")
    if not _is_int(available_tokens):
        raise TypeError("available_tokens должен быть целым числом")
    if available_tokens < 0:
        raise ValueError("available_tokens не может быть отрицательным")

    kept = 0
    used = 0
    for cost in reversed(turn_token_costs):
        if used + cost > available_tokens:
            break  # older turns are not considered: the window has no gaps
        used += cost
        kept += 1
    selected = turns[len(turns) - kept :]
    return [dict(message) for turn in selected for message in turn]
