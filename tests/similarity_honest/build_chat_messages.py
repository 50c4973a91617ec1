def build_chat_messages(instruction, history, user_text):
    for value in (instruction, user_text):
        if not isinstance(value, str):
            raise TypeError("нужны строки")
    system_text, question = instruction.strip(), user_text.strip()
    if len(system_text) == 0 or len(question) == 0:
        raise ValueError("пустая строка")
    result = [dict(role="developer", content=system_text)]
    result += history
    wrapped = "<customer_message>\n" + question + "\n</customer_message>"
    result.append(dict(role="user", content=wrapped))
    return result
