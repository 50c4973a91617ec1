"""Reference solution for exercises/commit_turn.py (the statement lives in the stub)."""


def commit_turn(
    history: list[dict[str, str]],
    user_text: str,
    assistant_text: str,
) -> int:
    if not isinstance(user_text, str) or not isinstance(assistant_text, str):
        raise TypeError("тексты хода должны быть строками")
    user_text = user_text.strip()
    assistant_text = assistant_text.strip()
    if not user_text or not assistant_text:
        raise ValueError("тексты хода не должны быть пустыми")
    # Both messages are validated before the list is touched: the turn is committed whole or not at all.
    history.extend(
        [
            {"role": "user", "content": user_text},
            {"role": "assistant", "content": assistant_text},
        ]
    )
    return len(history)
