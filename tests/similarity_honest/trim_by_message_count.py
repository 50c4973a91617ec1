def trim_by_message_count(messages, max_messages):
    if not isinstance(max_messages, int) or isinstance(max_messages, bool):
        raise TypeError("нужно целое")
    if max_messages < 0:
        raise ValueError("отрицательное")
    prefix = []
    rest = list(messages)
    if rest and rest[0].get("role") in {"system", "developer"}:
        prefix = [rest.pop(0)]
    if max_messages == 0:
        return prefix
    tail = rest[-max_messages:] if len(rest) > max_messages else rest
    if len(rest) > max_messages:
        while tail and tail[0].get("role") != "user":
            tail = tail[1:]
    return prefix + tail
