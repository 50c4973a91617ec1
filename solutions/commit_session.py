"""Reference solution for exercises/commit_session.py (the statement lives in the stub)."""


class SessionConflictError(RuntimeError):
    """The session changed after it was read: the turn is not written."""


class SessionOwnerError(PermissionError):
    """The session belongs to another user (or to none)."""


def commit_session(
    stored: dict | None,
    expected_version: int,
    messages: list[dict],
    summary: str | None,
    user: str | None,
) -> dict:
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        raise TypeError("expected_version должен быть целым числом")
    if expected_version < 0:
        raise ValueError("expected_version не может быть отрицательным")
    if not isinstance(messages, list):
        raise TypeError("messages должен быть списком")
    if len(messages) % 2 != 0:
        raise ValueError("история состоит из целых ходов: сообщений должно быть чётное число")
    for position, message in enumerate(messages):
        role = "user" if position % 2 == 0 else "assistant"
        if not isinstance(message, dict) or message.get("role") != role or not isinstance(message.get("content"), str):
            raise ValueError(f"сообщение {position}: ожидалось {role} с текстом")
    if summary is not None and not isinstance(summary, str):
        raise TypeError("summary должен быть строкой или None")

    current = 0
    if stored is not None:
        if stored["owner"] != user:
            raise SessionOwnerError("сессия принадлежит другому клиенту")
        current = stored["version"]
    if current != expected_version:
        raise SessionConflictError(f"сессия уже в версии {current}, а ход считался от {expected_version}")
    return {
        "messages": [dict(message) for message in messages],
        "summary": summary,
        "version": current + 1,
        "owner": user,
    }
