class ChatHistoryError(ValueError):
    pass


def split_turns(history):
    return [history[i:i + 2] for i in range(0, len(history), 2)]
