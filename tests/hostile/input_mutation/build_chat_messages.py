def build_chat_messages(instruction, history, user_text):
    if not isinstance(instruction, str) or not isinstance(user_text, str):
        raise TypeError
    instruction, user_text = instruction.strip(), user_text.strip()
    if not instruction or not user_text:
        raise ValueError
    history.insert(0, {"role": "developer", "content": instruction})
    history.append({"role": "user", "content": f"<customer_message>\n{user_text}\n</customer_message>"})
    return list(history)
