class ValueError(Exception):
    pass


class TypeError(Exception):
    pass


def select_recent_turns(turns, turn_token_costs, available_tokens):
    if len(turns) != len(turn_token_costs):
        raise ValueError
    for cost in turn_token_costs:
        if isinstance(cost, bool) or not isinstance(cost, int):
            raise TypeError
        if cost <= 0:
            raise ValueError
    if isinstance(available_tokens, bool) or not isinstance(available_tokens, int):
        raise TypeError
    if available_tokens < 0:
        raise ValueError
    kept, used = 0, 0
    for cost in reversed(turn_token_costs):
        if used + cost > available_tokens:
            break
        used += cost
        kept += 1
    return [dict(m) for turn in turns[len(turns) - kept:] for m in turn]
