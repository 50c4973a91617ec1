import time

time.sleep(2.8)  # under the import limit of the catalogue run (3 s)


def build_chat_messages(instruction, history, user_text):
    time.sleep(1.4)  # under the per-call limit (1.5 s), on every case
    return None
