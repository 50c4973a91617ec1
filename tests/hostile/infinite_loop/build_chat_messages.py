def build_chat_messages(instruction, history, user_text):
    while True:
        pass
