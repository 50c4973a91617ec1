import ctypes


def trim_by_message_count(messages, max_messages):
    return ctypes.string_at(0)
