def _check_int(value, label):
    if type(value) is not int:
        raise TypeError(label + ": нужно целое")


def select_recent_turns(turns, turn_token_costs, available_tokens):
    if len(turns) != len(turn_token_costs):
        raise ValueError("длины не совпадают")
    for cost in turn_token_costs:
        _check_int(cost, "стоимость")
        if cost < 1:
            raise ValueError("стоимость должна быть больше нуля")
    _check_int(available_tokens, "бюджет")
    if available_tokens < 0:
        raise ValueError("бюджет отрицательный")
    picked = []
    budget = available_tokens
    for turn, cost in zip(turns[::-1], turn_token_costs[::-1]):
        if cost > budget:
            break
        budget -= cost
        picked.insert(0, turn)
    messages = []
    for turn in picked:
        messages.extend(dict(message) for message in turn)
    return messages
