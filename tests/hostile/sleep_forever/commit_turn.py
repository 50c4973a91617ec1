import time


def commit_turn(history, user_text, assistant_text):
    time.sleep(10**6)
