"""The student's values and exceptions as plain tagged data, decided by exact type and identity.

Runs on the harness's thread on objects the student's code made, so it calls none of their
methods: types are compared with `is`, names read through type's own C descriptors, and the
exception classes the grader asks about are the real builtins captured when this module loaded,
before any student code ran (a class that merely calls itself ValueError, or lists it in a forged
mro(), is not ValueError).
"""

import builtins

_type = type
_len = len
_str = str
_int = int
_float = float
_bool = bool
_list = list
_tuple = tuple
_dict = dict
_dict_items = dict.items
_RecursionError = RecursionError
_BaseException = BaseException
_type_mro = type.__dict__["__mro__"].__get__
_type_name = type.__dict__["__qualname__"].__get__
_BUILTIN_EXCEPTIONS = tuple(
    (name, value)
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)

MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_STRING_CHARS = 4_000_000
MAX_INT_BITS = 13_000  # under 4,300 decimal digits: int <-> str limit on both sides
EXC_MESSAGE_CHARS = 300


class _TooBig(Exception):
    pass


def encode(value):
    """["n"], ["b", x], ["i", x], ["f", x], ["s", x], ["l"|"t", [...]], ["d", [[k, v], ...]], ["x", type]."""
    budget = [MAX_NODES, MAX_STRING_CHARS]

    def walk(item, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise _TooBig
        kind = _type(item)
        if item is None:
            return ["n"]
        if kind is _bool:
            return ["b", item]
        if kind is _int:
            if item.bit_length() > MAX_INT_BITS:
                raise _TooBig
            return ["i", item]
        if kind is _float:
            return ["f", item]
        if kind is _str:
            budget[1] -= _len(item)
            if budget[1] < 0:
                raise _TooBig
            return ["s", item]
        if kind is _list or kind is _tuple:
            return ["l" if kind is _list else "t", [walk(element, depth + 1) for element in item]]
        if kind is _dict:
            return [
                "d",
                [[walk(key, depth + 1), walk(val, depth + 1)] for key, val in _dict_items(item)],
            ]
        return ["x", safe_type_name(kind)]

    try:
        return walk(value, 0)
    except (_TooBig, _RecursionError):
        return ["x", "<слишком большой или вложенный объект>"]


def safe_type_name(kind):
    try:
        name = _type_name(kind)
        return name[:80] if _type(name) is _str else "?"
    except _BaseException:
        return "?"


def _inherits(klass, base):
    for item in _type_mro(klass):
        if item is base:
            return True
    return False


def class_or_none(value):
    """`value` if it is a class (by its metaclass's real mro, no attribute lookup), else None."""
    return value if _inherits(_type(value), _type) else None


def exception_reporter(custom):
    """describe(error, message) for one exercise; `custom`: [(name, class or None, base name)]."""
    builtin_by_name = dict(_BUILTIN_EXCEPTIONS)
    declared = [
        (name, klass, builtin_by_name.get(base)) for name, klass, base in custom if klass is not None
    ]

    def describe(error, message):
        kind = _type(error)
        report = {"is": None, "name": safe_type_name(kind)}
        for name, klass in _BUILTIN_EXCEPTIONS:
            if kind is klass:
                report["is"] = name
                break
        else:
            for name, klass, base in declared:
                if kind is klass:
                    report["is"] = name
                    report["inherits"] = base is not None and _inherits(kind, base)
                    break
        if _type(message) is _str:
            report["message"] = message[:EXC_MESSAGE_CHARS]
        else:
            report["message"] = "<str() исключения не сработал>"
        return report

    return describe
