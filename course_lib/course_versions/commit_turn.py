"""The course's version of exercises/commit_turn.py (notebook 02)."""


def commit_turn(history: list[dict[str, str]], user_text: str, assistant_text: str) -> int:
    texts = (user_text, assistant_text)
    if any(not isinstance(text, str) for text in texts):
        raise TypeError("тексты хода должны быть строками")
    question, answer = (text.strip() for text in texts)
    if "" in (question, answer):
        raise ValueError("тексты хода не должны быть пустыми")
    # Validated first, then one extend: the turn lands whole or not at all.
    history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return len(history)
