"""The course's version of exercises/select_recent_turns.py (notebook 04)."""


def _whole_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def select_recent_turns(
    turns: list[list[dict[str, str]]], turn_token_costs: list[int], available_tokens: int
) -> list[dict[str, str]]:
    if len(turns) != len(turn_token_costs):
        raise ValueError("у каждого хода должна быть своя стоимость")
    for cost in turn_token_costs:
        if not _whole_number(cost):
            raise TypeError("стоимость хода должна быть целым числом")
        if cost < 1:
            raise ValueError("стоимость хода должна быть положительной")
    if not _whole_number(available_tokens):
        raise TypeError("available_tokens должен быть целым числом")
    if available_tokens < 0:
        raise ValueError("available_tokens не может быть отрицательным")
    first = len(turns)  # index of the oldest turn in the window
    left = available_tokens
    while first > 0 and turn_token_costs[first - 1] <= left:
        left -= turn_token_costs[first - 1]
        first -= 1  # the first turn that does not fit ends the loop: no gaps in the window
    return [dict(message) for turn in turns[first:] for message in turn]
