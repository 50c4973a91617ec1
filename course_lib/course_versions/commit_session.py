"""The course's version of exercises/commit_session.py (notebook 07)."""


class SessionConflictError(RuntimeError):
    """The session changed after it was read: the turn is not written."""


class SessionOwnerError(PermissionError):
    """The session belongs to another user (or to none)."""


def _whole_turns(messages) -> bool:
    pairs = zip(messages[0::2], messages[1::2])
    return len(messages) % 2 == 0 and all(
        type(asked) is dict and type(answered) is dict
        and asked.get("role") == "user" and answered.get("role") == "assistant"
        and isinstance(asked.get("content"), str) and isinstance(answered.get("content"), str)
        for asked, answered in pairs
    )


def commit_session(stored, expected_version, messages, summary, user):
    if type(expected_version) is not int:
        raise TypeError(f"expected_version: ожидалось целое число, а не {type(expected_version).__name__}")
    if expected_version < 0:
        raise ValueError("expected_version < 0")
    if type(messages) is not list:
        raise TypeError("messages: ожидался список")
    if not _whole_turns(messages):
        raise ValueError("messages: история не из целых ходов user → assistant")
    if not (summary is None or isinstance(summary, str)):
        raise TypeError("summary: ожидалась строка или None")
    owner, version = (user, 0) if stored is None else (stored["owner"], stored["version"])
    if owner != user:
        raise SessionOwnerError("продолжить сессию может только тот, кто её начал")
    if version != expected_version:
        raise SessionConflictError(f"версия {version}, а запись считалась от версии {expected_version}")
    copied = [{key: value for key, value in message.items()} for message in messages]
    return {"messages": copied, "summary": summary, "version": version + 1, "owner": owner}
