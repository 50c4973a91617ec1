while True:
    pass


def select_recent_turns(turns, turn_token_costs, available_tokens):
    return []
