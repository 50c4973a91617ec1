"""How long a child waited for a CPU: the part of a wall-clock wait the load took, not the child.

Linux counts, per thread, the nanoseconds it spent runnable but not running (the second field of
`/proc/<pid>/task/<tid>/schedstat`, CONFIG_SCHED_INFO; readable by every user). A busy loop that
hangs runs, a sleeper sleeps: neither accrues this delay, so subtracting it from a timeout spares a
case that a loaded machine slowed down and never one that hangs. The child's processes are the
launcher's session (`start_new_session`): the launcher, the PID namespace's init and the harness,
which cannot fork. Where the kernel does not say (no schedstat, /proc hidden) the delay is 0 and a
timeout is plain wall-clock time, as before.
"""

from __future__ import annotations

import os

_NS = 1e-9


def session_pids(session: int) -> list[int]:
    """Processes of this session (scans /proc: done at a deadline, not on every wait)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and fields[3] == str(session).encode():  # state ppid pgrp session
            found.append(int(entry))
    return found


class RunQueue:
    """The run-queue delay of one child's threads (the harness runs each call on a thread of its
    own). Each thread's counter is kept open and re-read with pread — a microsecond, as this runs
    on every wait; the processes and threads are looked up again only at a deadline."""

    def __init__(self, session: int) -> None:
        self.session = session
        self._fds: dict[tuple[int, int], int] = {}  # (pid, tid) -> fd of its schedstat

    def refresh(self) -> None:
        current = set()
        for pid in session_pids(self.session):
            try:
                current.update((pid, int(tid)) for tid in os.listdir(f"/proc/{pid}/task"))
            except OSError:
                continue
        for key in set(self._fds) - current:
            os.close(self._fds.pop(key))
        for pid, tid in current - set(self._fds):
            try:
                self._fds[(pid, tid)] = os.open(f"/proc/{pid}/task/{tid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue

    def delays(self) -> dict[tuple[int, int], float]:
        """{(pid, tid): seconds that thread waited for a CPU}."""
        if not self._fds:
            self.refresh()
        found = {}
        for key, fd in list(self._fds.items()):
            try:
                found[key] = int(os.pread(fd, 128, 0).split()[1]) * _NS
            except (OSError, IndexError, ValueError):  # the thread is gone
                os.close(self._fds.pop(key))
        return found

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


class Watch:
    """The run-queue delay of a child's processes since the watch began (one wait)."""

    def __init__(self, queue: RunQueue) -> None:
        self.queue = queue
        self.start = queue.delays()
        self.credited = 0.0

    def new_delay(self) -> float:
        """Seconds of delay not yet credited; a thread first seen now counts from 0."""
        self.queue.refresh()
        now = self.queue.delays()
        total = sum(max(0.0, value - self.start.get(key, 0.0)) for key, value in now.items())
        fresh, self.credited = total - self.credited, total
        return max(0.0, fresh)
