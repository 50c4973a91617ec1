class ForgedValueError(Exception):
    pass


ForgedValueError.__module__ = "builtins"
ForgedValueError.__qualname__ = ForgedValueError.__name__ = "ValueError"


class _LyingMeta(type):
    def mro(cls):
        return [cls, TypeError, Exception, BaseException, object]


class ForgedTypeError(Exception, metaclass=_LyingMeta):
    __module__ = "builtins"
    __qualname__ = "TypeError"


def select_recent_turns(turns, turn_token_costs, available_tokens):
    if len(turns) != len(turn_token_costs):
        raise ForgedValueError
    for cost in turn_token_costs:
        if isinstance(cost, bool) or not isinstance(cost, int):
            raise ForgedTypeError
        if cost <= 0:
            raise ForgedValueError
    if isinstance(available_tokens, bool) or not isinstance(available_tokens, int):
        raise ForgedTypeError
    if available_tokens < 0:
        raise ForgedValueError
    kept, used = 0, 0
    for cost in reversed(turn_token_costs):
        if used + cost > available_tokens:
            break
        used += cost
        kept += 1
    return [dict(m) for turn in turns[len(turns) - kept:] for m in turn]
