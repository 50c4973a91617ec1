"""Reference solution for exercises/run_tool_loop.py (the statement lives in the stub)."""

from collections.abc import Callable

LIMIT_REACHED = "Предел шагов ({}) исчерпан: модель всё ещё вызывает инструменты. Ход отменён, ничего не изменилось."


def run_tool_loop(
    ask_model: Callable[[list[dict]], dict],
    run_calls: Callable[[list[dict]], list[dict]],
    add_exchange: Callable[[list[dict], dict, list[dict]], list[dict]],
    turn: list[dict],
    max_steps: int,
) -> list[dict]:
    if not isinstance(turn, list):
        raise TypeError("turn должен быть списком сообщений")
    if not turn:
        raise ValueError("turn пуст: ход начинается с сообщения клиента")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int):
        raise TypeError("max_steps должен быть целым числом")
    if max_steps < 1:
        raise ValueError("max_steps должен быть не меньше 1")

    messages = list(turn)
    rounds = 0
    while True:
        reply = ask_model(messages)
        if not isinstance(reply, dict):
            raise TypeError("ask_model должен вернуть сообщение ассистента (словарь)")
        tool_calls = reply.get("tool_calls")
        if not tool_calls:
            break
        if rounds == max_steps:
            raise RuntimeError(LIMIT_REACHED.format(max_steps))
        results = run_calls(tool_calls)
        messages = add_exchange(messages, reply, results)
        rounds += 1

    text = reply.get("content")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("модель не ответила ни текстом, ни вызовами")
    return [*messages, {"role": "assistant", "content": text}]
