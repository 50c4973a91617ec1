"""Reference solution for exercises/build_summary_source.py (the statement lives in the stub)."""

SPEAKERS = {"user": "Клиент", "assistant": "Поддержка"}


def build_summary_source(
    previous_summary: str | None,
    messages: list[dict[str, str]],
) -> str:
    if previous_summary is not None and not isinstance(previous_summary, str):
        raise TypeError("previous_summary должен быть строкой или None")
    if not messages:
        raise ValueError("нет сообщений для summary")
    lines = []
    for message in messages:
        role = message["role"]
        if role not in SPEAKERS:
            raise ValueError(f"недопустимая роль: {role!r}")
        content = message["content"].strip()
        if not content:
            raise ValueError("пустое сообщение")
        lines.append(f"{SPEAKERS[role]}: {content}")
    summary = (previous_summary or "").strip() or "Отсутствует."
    fragment = "\n".join(lines)
    return (
        f"<previous_summary>\n{summary}\n</previous_summary>\n\n"
        f"<conversation_fragment>\n{fragment}\n</conversation_fragment>"
    )
