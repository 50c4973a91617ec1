def commit_turn(history, user_text, assistant_text):
    print("\ud800 \udfff \x1b[31mКРАСНЫЙ\x1b[0m")  # a correct solution that prints surrogates
    if not isinstance(user_text, str) or not isinstance(assistant_text, str):
        raise TypeError("тексты хода должны быть строками")
    user_text, assistant_text = user_text.strip(), assistant_text.strip()
    if not user_text or not assistant_text:
        raise ValueError("тексты хода не должны быть пустыми")
    history.append({"role": "user", "content": user_text})
    history.append({"role": "assistant", "content": assistant_text})
    return len(history)
