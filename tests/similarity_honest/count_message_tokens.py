def count_message_tokens(messages, count_text):
    def counted(value):
        if not isinstance(value, str):
            raise TypeError("ожидалась строка")
        return count_text(value)

    result = 3
    for item in messages:
        if type(item) is not dict:
            raise TypeError("нужен словарь")
        result += 3 + counted(item.get("role")) + counted(item.get("content"))
        if "name" in item:
            result += 1 + counted(item["name"])
    return result
