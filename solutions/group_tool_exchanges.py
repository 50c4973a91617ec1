"""Reference solution for exercises/group_tool_exchanges.py (the statement lives in the stub)."""


class ToolExchangeError(ValueError):
    """The history is not a sequence of whole turns with their tool exchanges."""


def group_tool_exchanges(history: list[dict]) -> list[list[dict]]:
    turns = []
    turn = []  # the open turn; empty between turns
    pending = set()  # call ids of the last tool_calls message that have no result yet
    for number, message in enumerate(history):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                raise ToolExchangeError(f"сообщение {number}: результат без вызова")
            pending.discard(message.get("tool_call_id"))
            turn.append(message)
            continue
        if role not in ("user", "assistant"):
            raise ToolExchangeError(f"сообщение {number}: неизвестная роль {role!r}")
        if pending:
            raise ToolExchangeError(f"сообщение {number}: не все вызовы получили результат")
        if role == "user":
            if turn:
                raise ToolExchangeError(f"сообщение {number}: прошлый ход не закончен")
            turn = [message]
            continue
        if not turn:
            raise ToolExchangeError(f"сообщение {number}: ответ без вопроса")
        turn.append(message)
        if message.get("tool_calls"):
            pending = {call.get("id") for call in message["tool_calls"]}
        else:
            turns.append(turn)
            turn = []
    if turn:
        raise ToolExchangeError("история кончается посреди хода")
    return turns
