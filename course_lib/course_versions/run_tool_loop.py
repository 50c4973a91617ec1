"""The course's version of exercises/run_tool_loop.py (notebook 09)."""


def _check_inputs(turn: object, max_steps: object) -> None:
    if type(turn) is not list:
        raise TypeError("turn: нужен список сообщений хода")
    if len(turn) == 0:
        raise ValueError("turn: ход пуст, а начинается он с сообщения клиента")
    if type(max_steps) is not int:  # True is an int to isinstance(), not here
        raise TypeError("max_steps: нужно целое число кругов")
    if max_steps < 1:
        raise ValueError("max_steps: нужен хотя бы один круг вызовов")


def _calls_of(reply: object) -> list:
    """The calls the model made; [] when it made none (no key, None or an empty list)."""
    if type(reply) is not dict:
        raise TypeError(f"ask_model вернул {type(reply).__name__}, а нужно сообщение ассистента (словарь)")
    return reply.get("tool_calls") or []


def _answer_text(reply: dict) -> str:
    """The reply's text, when the model answered in words: a reply with neither is refused."""
    text = reply.get("content")
    if type(text) is not str or text.strip() == "":
        raise ValueError("модель не ответила ни текстом, ни вызовами")
    return text


def run_tool_loop(ask_model, run_calls, add_exchange, turn, max_steps):
    _check_inputs(turn, max_steps)
    so_far = turn[:]  # the caller's list stays as it was, whatever happens
    for made in range(max_steps + 1):  # max_steps rounds, then one more request for the answer
        reply = ask_model(so_far)  # every request: the whole turn so far
        calls = _calls_of(reply)
        if not calls:
            # Only role and content join the turn: an empty tool_calls is rejected by providers.
            return so_far + [{"role": "assistant", "content": _answer_text(reply)}]
        if made == max_steps:
            break  # the request after the last round called tools again
        so_far = add_exchange(so_far, reply, run_calls(calls))  # the calls, then their results
    raise RuntimeError(
        f"Предел шагов ({max_steps}) исчерпан: модель всё ещё вызывает инструменты и не ответила текстом. "
        "Ход отменён, ничего не изменилось."
    )
