"""Frames between the grader and its child.

Grader -> child (fd 0, then a private fd): length-prefixed marshal data. Trusted direction; every
load is announced to the audit guard first, which refuses any other `marshal.loads`.
Child -> grader (fd 3): length-prefixed JSON text of plain data, each frame stamped with the
per-child nonce the config carried, so lines the student's code writes to fd 3 itself are rejected.
"""

import marshal
import os

try:
    from _json import encode_basestring_ascii as _quote  # C, no `re` import
except ImportError:  # pragma: no cover - every CPython build has _json
    from json.encoder import py_encode_basestring_ascii as _quote

RESULT_FD = 3
FRAMES_FD = 4  # the grader's frames after the config (fd 0 becomes /dev/null)

_read = os.read
_write = os.write
_type = type
_len = len
_int = int
_float = float
_str = str
_bool = bool
_list = list
_tuple = tuple
_dict = dict
_dict_items = dict.items
_float_repr = float.__repr__
_int_repr = int.__repr__
_memoryview = memoryview
_TypeError = TypeError
_INFINITIES = (float("inf"), float("-inf"))


def read_exact(fd, size):
    chunks = []
    while size:
        chunk = _read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= _len(chunk)
    return b"".join(chunks)


def make_receiver(fd, permit):
    """recv() -> the next frame (None at EOF); `permit(body)` clears one marshal.loads of it."""
    loads = marshal.loads

    def recv():
        header = read_exact(fd, 4)
        if header is None:
            return None
        body = read_exact(fd, _int.from_bytes(header, "big"))
        if body is None:
            return None
        permit(body)
        return loads(body)

    return recv


def to_json(value):
    """JSON text of our own messages (dicts with str keys, lists, str, int, float, bool, None)."""
    kind = _type(value)
    if value is None:
        return "null"
    if kind is _bool:
        return "true" if value else "false"
    if kind is _int:
        return _int_repr(value)
    if kind is _float:
        if value != value:
            return "NaN"
        if value in _INFINITIES:
            return "Infinity" if value > 0 else "-Infinity"
        return _float_repr(value)
    if kind is _str:
        return _quote(value)
    if kind is _list or kind is _tuple:
        return "[" + ",".join([to_json(item) for item in value]) + "]"
    if kind is _dict:
        return "{" + ",".join([_quote(k) + ":" + to_json(v) for k, v in _dict_items(value)]) + "}"
    raise _TypeError("unexpected value in a result frame")


def make_sender(nonce):
    """send(message): one stamped frame to fd 3; the nonce lives only in this closure."""
    stamp = '{"k":' + _quote(nonce) + ","

    def send(message):
        body = to_json(message)
        data = (stamp + body[1:] if body != "{}" else stamp[:-1] + "}").encode("ascii")
        view = _memoryview(_len(data).to_bytes(4, "big") + data)
        while view:
            view = view[_write(RESULT_FD, view) :]

    return send
