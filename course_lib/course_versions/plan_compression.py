"""The course's version of exercises/plan_compression.py (notebook 05)."""


def _count(value, name: str) -> int:
    if type(value) is not int:
        raise TypeError(f"{name}: ожидалось целое число, а не {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} < 0")
    return value


def plan_compression(history, window_kept, keep_recent_turns):
    if type(history) is not list:
        raise TypeError("history: ожидался список сообщений")
    if len(history) % 2:
        raise ValueError("history: нечётное число сообщений — не целые ходы")
    _count(window_kept, "window_kept")
    if window_kept % 2 or window_kept > len(history):
        raise ValueError(f"window_kept = {window_kept}: окно берёт целые ходы из {len(history)} сообщений")
    _count(keep_recent_turns, "keep_recent_turns")
    dropped = len(history) - window_kept
    if not dropped:
        return None
    verbatim = 2 * keep_recent_turns if 2 * keep_recent_turns < window_kept else window_kept
    cut = len(history) - verbatim
    return {"fold": list(history[:cut]), "keep": list(history[cut:])}
