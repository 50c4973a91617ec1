"""Reference solution for exercises/console_command.py (the statement lives in the stub)."""

HELP = "Команды: /new — новый диалог, /exit — выход."


def console_command(line, session_id, new_session_id):
    if type(line) is not str:
        raise TypeError("line должна быть строкой")
    if type(session_id) is not str:
        raise TypeError("session_id должен быть строкой")
    session_id = session_id.strip()
    if session_id == "":
        raise ValueError("Session ID не должен быть пустым.")
    if not callable(new_session_id):
        raise TypeError("new_session_id должна быть функцией")

    text = line.strip()
    command = text.lower()
    result = {"action": "send", "session_id": session_id, "text": None, "notice": None}
    if text == "":
        result["action"] = "skip"
        result["notice"] = "Сообщение не должно быть пустым: модели ничего не отправлено."
    elif not text.startswith("/"):
        result["text"] = text
    elif command == "/exit":
        result["action"] = "exit"
    elif command == "/new":
        new_id = new_session_id()
        if type(new_id) is not str:
            raise TypeError("new_session_id() должна вернуть строку")
        new_id = new_id.strip()
        if new_id == "":
            raise ValueError("Новый Session ID не должен быть пустым.")
        if new_id == session_id:
            raise ValueError("Новый Session ID совпадает с текущим.")
        result["action"] = "new"
        result["session_id"] = new_id
        result["notice"] = "Новый Session ID: " + new_id
    else:
        result["action"] = "unknown"
        result["notice"] = "Неизвестная команда: " + text + ". Модели ничего не отправлено. " + HELP
    return result
