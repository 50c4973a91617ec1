import time

time.sleep(2.8)  # under the import limit of the catalogue run (3 s)


def select_recent_turns(turns, turn_token_costs, available_tokens):
    time.sleep(1.4)  # under the per-call limit (1.5 s), on every case
    return None
