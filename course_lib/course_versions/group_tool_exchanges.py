"""The course's version of exercises/group_tool_exchanges.py (notebook 09)."""


class ToolExchangeError(ValueError):
    """The history is not a sequence of whole turns with their tool exchanges."""


def group_tool_exchanges(history: list[dict]) -> list[list[dict]]:
    turns: list[list[dict]] = []
    current: list[dict] | None = None  # the turn being read; None between turns
    waiting: list[str] = []  # ids of the open tool_calls message still without a result
    for index, message in enumerate(history):
        role = message.get("role")
        where = f"сообщение №{index} ({role})"
        if role not in ("user", "assistant", "tool"):
            raise ToolExchangeError(f"{where}: в истории бывают только user, assistant и tool")
        if role != "tool" and waiting:
            raise ToolExchangeError(f"{where}: у вызовов {', '.join(waiting)} ещё нет результатов")
        if role == "user":
            if current is not None:
                raise ToolExchangeError(f"{where}: предыдущий ход не закончен ответом ассистента")
            current = [message]
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                raise ToolExchangeError(f"{where}: результат без вызова (tool_call_id={call_id!r} никто не ждёт)")
            waiting.remove(call_id)
            current.append(message)
        elif current is None:
            raise ToolExchangeError(f"{where}: перед ним нет сообщения клиента")
        else:
            current.append(message)
            calls = message.get("tool_calls") or []
            if calls:
                waiting = [call.get("id") for call in calls]
            else:
                turns.append(current)
                current = None
    if current is not None:
        missing = f": у вызовов {', '.join(waiting)} нет результатов" if waiting else ""
        raise ToolExchangeError(f"история кончается посреди хода{missing}")
    return turns
