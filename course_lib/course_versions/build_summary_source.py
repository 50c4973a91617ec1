"""The course's version of exercises/build_summary_source.py (notebook 05)."""

SPEAKER = {"user": "Клиент", "assistant": "Поддержка"}


def _line(message: dict[str, str]) -> str:
    if message["role"] not in SPEAKER:
        raise ValueError(f"роль {message['role']!r} не входит в диалог")
    text = message["content"].strip()
    if not text:
        raise ValueError("пустое сообщение")
    return f"{SPEAKER[message['role']]}: {text}"


def build_summary_source(previous_summary: str | None, messages: list[dict[str, str]]) -> str:
    if not (previous_summary is None or isinstance(previous_summary, str)):
        raise TypeError("previous_summary — строка или None")
    if not messages:
        raise ValueError("нечего сжимать: messages пуст")
    fragment = "\n".join(_line(message) for message in messages)
    known = (previous_summary or "").strip() or "Отсутствует."
    return "\n".join([
        "<previous_summary>", known, "</previous_summary>", "",
        "<conversation_fragment>", fragment, "</conversation_fragment>",
    ])
