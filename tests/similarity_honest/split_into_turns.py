class ChatHistoryError(ValueError):
    pass


def split_into_turns(history):
    result = []
    index = 0
    while index < len(history):
        if index + 1 >= len(history):
            raise ChatHistoryError("ход без ответа")
        first, second = history[index], history[index + 1]
        if first.get("role") != "user" or second.get("role") != "assistant":
            raise ChatHistoryError("неверный порядок ролей в ходе %d" % (index // 2 + 1))
        result.append([{**first}, {**second}])
        index += 2
    return result
