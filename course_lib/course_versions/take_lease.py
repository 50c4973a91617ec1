"""The course's version of exercises/take_lease.py (notebook 07)."""


def _is_number(value) -> bool:
    # bool is an int in Python, but `True` seconds is a slip, not a time.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_claimant(claimant) -> None:
    if not isinstance(claimant, dict):
        raise TypeError("claimant: ожидался словарь с ключами owner, host и pid")
    for key in ("owner", "host"):
        if not isinstance(claimant.get(key), str):
            raise TypeError(f"claimant[{key!r}]: ожидалась строка")
        if claimant[key] == "":
            raise ValueError(f"claimant[{key!r}]: пустая строка — по ней не узнать, чья аренда")
    pid = claimant.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool):
        raise TypeError("claimant['pid']: ожидался номер процесса — целое число")


def _check_clock(now, lease_seconds) -> None:
    if not _is_number(now):
        raise TypeError("now: ожидалось число секунд")
    if not _is_number(lease_seconds):
        raise TypeError("lease_seconds: ожидалось число секунд")
    if not lease_seconds > 0:
        raise ValueError("lease_seconds: срок аренды должен быть больше нуля")


def _expired(current, now) -> bool:
    # `expires` is the first second the lease no longer holds, so at that very second it is free.
    return current["expires"] <= now


def _crashed(current, claimant) -> bool:
    # A pid is only meaningful on its own host: on ours, a pid that is gone is a crashed process;
    # a "dead" pid of another host says nothing (this machine cannot see that one's processes).
    return current["host"] == claimant["host"] and not current["alive"]


def _may_take(current, claimant, now) -> bool:
    if current is None:
        return True  # nobody is answering in the session
    if current["owner"] == claimant["owner"]:
        return True  # the holder itself, renewing its lease for a long turn
    return _expired(current, now) or _crashed(current, claimant)


def take_lease(current, claimant, now, lease_seconds):
    _check_claimant(claimant)
    _check_clock(now, lease_seconds)
    if not _may_take(current, claimant, now):
        return None  # a live process is answering in the session: the claimant waits
    # A new dict (the current lease is the store's row, never edited): the claimant's, from now on.
    return {
        "owner": claimant["owner"],
        "host": claimant["host"],
        "pid": claimant["pid"],
        "expires": now + lease_seconds,
    }
