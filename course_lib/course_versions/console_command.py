"""The course's version of exercises/console_command.py (notebook 03).

The one implementation of what the console does with a typed line: `course_lib.console.run_console`
(`python -m course_lib chat`) takes it as its `decide` parameter, and notebook 03's Console and
`chat --your-code` pass the student's function through `your_code` (this version until that one
passes its public cases).
"""

from __future__ import annotations

from collections.abc import Callable

COMMANDS = "Команды: /new — новый диалог, /exit — выход."
EMPTY = "Сообщение не должно быть пустым: модели ничего не отправлено."


def _session_key(value: object, what: str) -> str:
    """A Session ID as the service keys it: a string without surrounding whitespace, not empty."""
    if not isinstance(value, str):
        raise TypeError(f"{what}: ожидалась строка, а не {type(value).__name__}")
    key = value.strip()
    if not key:
        raise ValueError(f"{what} не должен быть пустым.")
    return key


def _decision(action: str, session_id: str, text: str | None = None, notice: str | None = None) -> dict:
    # A new dict on every call: the console may keep it or change it, nothing else shares it.
    return {"action": action, "session_id": session_id, "text": text, "notice": notice}


def _new_session(current: str, new_session_id: Callable[[], str]) -> dict:
    """/new: the next turns go to a fresh Session ID (the console clears the old conversation)."""
    fresh = _session_key(new_session_id(), "Новый Session ID")
    if fresh == current:  # the "new" conversation would go on with the old history
        raise ValueError("Новый Session ID совпадает с текущим: /new должен начать другой разговор.")
    return _decision("new", fresh, notice=f"Новый Session ID: {fresh}")


def console_command(line: str, session_id: str, new_session_id: Callable[[], str]) -> dict:
    if not isinstance(line, str):
        raise TypeError(f"line: ожидалась строка, а не {type(line).__name__}")
    current = _session_key(session_id, "Session ID")  # checked for every line, even an empty one
    if not callable(new_session_id):
        raise TypeError("new_session_id: ожидалась функция без аргументов, которая создаёт Session ID")

    typed = line.strip()
    if not typed:  # no request for an empty message: the history and the bill stay as they were
        return _decision("skip", current, notice=EMPTY)
    if not typed.startswith("/"):  # a message; a slash inside it ("у меня /new заказ") is just text
        return _decision("send", current, text=typed)
    command = typed.lower()  # /New and /EXIT are the same commands
    if command == "/exit":
        return _decision("exit", current)
    if command == "/new":
        return _new_session(current, new_session_id)
    # "/help", "/exit сейчас": not a command the console knows, and not a message for the model.
    notice = f"Неизвестная команда: {typed}. Модели ничего не отправлено. {COMMANDS}"
    return _decision("unknown", current, notice=notice)
