"""Reference solution for exercises/take_lease.py (the statement lives in the stub)."""


def take_lease(current: dict | None, claimant: dict, now: float, lease_seconds: float) -> dict | None:
    if not isinstance(claimant, dict):
        raise TypeError("claimant должен быть словарём")
    owner, host, pid = claimant.get("owner"), claimant.get("host"), claimant.get("pid")
    if not isinstance(owner, str) or not isinstance(host, str):
        raise TypeError("owner и host претендента должны быть строками")
    if owner == "" or host == "":
        raise ValueError("owner и host претендента не могут быть пустыми")
    if isinstance(pid, bool) or not isinstance(pid, int):
        raise TypeError("pid претендента должен быть целым числом")
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise TypeError("now должно быть числом")
    if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, (int, float)):
        raise TypeError("lease_seconds должно быть числом")
    if not lease_seconds > 0:
        raise ValueError("срок аренды должен быть больше нуля")

    if current is not None:
        renewing = current["owner"] == owner
        expired = current["expires"] <= now
        crashed = current["host"] == host and not current["alive"]
        if not (renewing or expired or crashed):
            return None
    return {"owner": owner, "host": host, "pid": pid, "expires": now + lease_seconds}
