"""Reference solution for exercises/validate_history.py (the statement lives in the stub)."""

ROLES = ("user", "assistant")


def validate_history(history: list[dict[str, str]]) -> int:
    if not isinstance(history, list):
        raise TypeError("history должен быть списком")
    expected = "user"
    for number, message in enumerate(history, start=1):
        if not isinstance(message, dict):
            raise TypeError(f"Сообщение №{number}: ожидался словарь")
        if set(message) != {"role", "content"}:
            raise ValueError(f"Сообщение №{number}: нужны ровно ключи role и content")
        content = message["content"]
        if not isinstance(content, str):
            raise TypeError(f"Сообщение №{number}: content должен быть строкой")
        if not content.strip():
            raise ValueError(f"Сообщение №{number}: пустой текст")
        role = message["role"]
        if role not in ROLES:
            raise ValueError(f"Сообщение №{number}: роли {role!r} в истории не место")
        if role != expected:
            raise ValueError(f'Сообщение №{number}: ожидалась роль "{expected}", а пришла "{role}"')
        expected = "assistant" if role == "user" else "user"
    if expected != "user":
        raise ValueError(f"Сообщение №{len(history)}: ход сохранён наполовину — нет ответа")
    return len(history) // 2
