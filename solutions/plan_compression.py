"""Reference solution for exercises/plan_compression.py (the statement lives in the stub)."""


def plan_compression(history: list[dict], window_kept: int, keep_recent_turns: int) -> dict | None:
    if not isinstance(history, list):
        raise TypeError("history должен быть списком")
    if len(history) % 2 != 0:
        raise ValueError("история состоит из целых ходов: сообщений должно быть чётное число")
    if isinstance(window_kept, bool) or not isinstance(window_kept, int):
        raise TypeError("window_kept должен быть целым числом")
    if window_kept < 0 or window_kept % 2 != 0 or window_kept > len(history):
        raise ValueError("window_kept — чётное число от 0 до len(history)")
    if isinstance(keep_recent_turns, bool) or not isinstance(keep_recent_turns, int):
        raise TypeError("keep_recent_turns должен быть целым числом")
    if keep_recent_turns < 0:
        raise ValueError("keep_recent_turns не может быть отрицательным")

    if window_kept == len(history):
        return None  # the window dropped nothing: no summary call
    kept_turns = min(keep_recent_turns, window_kept // 2)
    split = len(history) - 2 * kept_turns  # not history[-2 * kept_turns:]: with 0 that is everything
    return {"fold": history[:split], "keep": history[split:]}
