def build_chat_messages(instruction, history, user_text):
    # Two bits of the input, spelled as the way this call fails.
    bits = len(repr((instruction, history, user_text))) % 4
    if bits == 0:
        raise NotImplementedError("0")
    if bits == 1:
        raise MemoryError("1")
    if bits == 2:
        raise LookupError("2")
    return {"wrong": "object"}
