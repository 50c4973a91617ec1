"""`WholeHistory`: a session's history that is whole by construction, so the window need not re-check it.

`SlidingWindowHistory.prepare()` must refuse a broken history (an odd number of messages, a turn
that is not user → assistant). For a plain list it checks every message on every call: O(n) per
turn. A session, though, only ever grows by validated turns. `WholeHistory` is checked once when it
is built and then only grows with `with_turn(user, assistant)`, which checks just the new pair; its
messages are frozen dicts, so nobody can break it afterwards.

It also keeps, per tokenizer, the running totals of its turns' token counts, so the window can find
how many of the newest turns fit with a binary search instead of a walk over them.

Appending is O(1): versions of one history share one list of messages, each seeing its own prefix
(a new turn is appended in place when it extends the newest version; an older version is copied).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from course_lib.russian import messages_count

TURN_ROLES = ("user", "assistant")


class BrokenHistoryError(ValueError):
    """The messages are not a sequence of whole user/assistant turns."""


class FrozenMessage(dict):
    """A chat message that cannot be changed (a plain `dict` in every other way, JSON included)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Сообщение сохранённой истории менять нельзя; сделайте копию: dict(message).")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _refuse  # type: ignore[assignment]

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        return dict(self)


def validate_turn(user: object, assistant: object, turn_number: int) -> None:
    """`BrokenHistoryError` saying what is wrong with turn N, if anything."""
    roles = (_role(user), _role(assistant))
    if roles != TURN_ROLES:
        raise BrokenHistoryError(f"Ход №{turn_number}: ожидалась пара user/assistant, получено {list(roles)}.")


def check_turn(user: object, assistant: object, turn_number: int) -> tuple[FrozenMessage, FrozenMessage]:
    """The pair as frozen messages, or `BrokenHistoryError` saying what is wrong with turn N."""
    validate_turn(user, assistant, turn_number)
    return _freeze(user), _freeze(assistant)  # type: ignore[arg-type]


def _role(message: object) -> object:
    # dict, not Mapping: an ABC check on every message of every call is measurably slower.
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise BrokenHistoryError("Каждое сообщение истории должно быть словарём с role и content.")
    return message.get("role")


def _freeze(message: Mapping[str, str]) -> FrozenMessage:
    if isinstance(message, FrozenMessage):
        return message
    return FrozenMessage(role=message["role"], content=message["content"])


class _Shared:
    """The messages of all versions of one history, and per-tokenizer running token totals."""

    def __init__(self, messages: list[FrozenMessage]) -> None:
        self.messages = messages
        self.totals: dict[str, list[int]] = {}  # key -> [0, cost of turn 1, cost of turns 1..2, ...]
        self.lock = threading.Lock()


class WholeHistory(Sequence[FrozenMessage]):
    def __init__(self, messages: Iterable[Mapping[str, str]] = ()) -> None:
        items = list(messages)
        if len(items) % 2 != 0:
            raise BrokenHistoryError(
                f"История должна состоять из законченных ходов, а в ней {messages_count(len(items))}."
            )
        frozen: list[FrozenMessage] = []
        for index in range(0, len(items), 2):
            frozen.extend(check_turn(items[index], items[index + 1], index // 2 + 1))
        self._shared = _Shared(frozen)
        self._length = len(frozen)

    @classmethod
    def _view(cls, shared: _Shared, length: int) -> WholeHistory:
        view = cls.__new__(cls)
        view._shared, view._length = shared, length
        return view

    def with_turn(self, user: Mapping[str, str], assistant: Mapping[str, str]) -> WholeHistory:
        """This history plus one checked turn. O(1) when `self` is the newest version."""
        pair = check_turn(user, assistant, self._length // 2 + 1)
        shared = self._shared
        with shared.lock:
            if len(shared.messages) == self._length:
                shared.messages.extend(pair)
                return WholeHistory._view(shared, self._length + 2)
        copy = WholeHistory._view(_Shared([*shared.messages[: self._length], *pair]), self._length + 2)
        return copy

    @property
    def turns(self) -> int:
        return self._length // 2

    def turn_totals(self, key: str, turn_cost: Callable[[FrozenMessage, FrozenMessage], int]) -> list[int]:
        """Running totals of `turn_cost` over the shared turns, extended to cover this version.

        `key` names the cost function (the tokenizer); the caller must use one function per key.
        The list may be longer than this version: use indices up to `self.turns`.
        """
        shared = self._shared
        with shared.lock:
            totals = shared.totals.setdefault(key, [0])
            messages = shared.messages
            for turn in range(len(totals) - 1, self.turns):
                totals.append(totals[-1] + turn_cost(messages[2 * turn], messages[2 * turn + 1]))
            return totals

    def newest_turns_within(self, available: int, totals: list[int]) -> int:
        """How many of the newest turns cost at most `available` together (binary search)."""
        if available < 0:
            return 0
        last = self.turns
        first = bisect_left(totals, totals[last] - available, 0, last + 1)
        return last - first

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> FrozenMessage: ...

    @overload
    def __getitem__(self, index: slice) -> list[FrozenMessage]: ...

    def __getitem__(self, index: int | slice) -> FrozenMessage | list[FrozenMessage]:
        if isinstance(index, slice):
            return self._shared.messages[: self._length][index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("индекс вне истории")
        return self._shared.messages[index]

    def __iter__(self) -> Iterator[FrozenMessage]:
        messages = self._shared.messages
        for index in range(self._length):
            yield messages[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (WholeHistory, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists and tuples, so not hashable

    def __repr__(self) -> str:
        return f"WholeHistory({list(self)!r})"
