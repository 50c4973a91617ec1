def commit_turn(history, user_text, assistant_text):
    texts = []
    for text in (user_text, assistant_text):
        if type(text) is not str:
            raise TypeError("нужна строка")
        cleaned = text.strip()
        if cleaned == "":
            raise ValueError("пустой текст")
        texts.append(cleaned)
    history.append({"role": "user", "content": texts[0]})
    history.append({"role": "assistant", "content": texts[1]})
    return len(history)
