"""Running untrusted exercise code in a child process, behind the strongest tier available.

A grader gives each submission one child for all its exercises (`runner.SubmissionChild`: every
public phase before any hidden one; a fresh child after a timeout, a crash, a failed import, or
once a file has rebound a name of builtins or of a shared module, see `child.harness.Baseline`).

Tiers (chosen once per process by `detect_tier()`, or forced with `Limits.tier`):

* ``root`` (the grader runs as root, as in CI): the child enters new mount, PID, network, IPC and
  UTS namespaces; `pivot_root` puts it on a fresh tmpfs that holds only read-only binds of /usr,
  the Python installation and /dev/{null,zero,random,urandom}, plus an empty writable /box with
  its own copy of the one file under test. It then switches to a uid/gid that belongs to this
  child alone and has no capabilities, and sets no_new_privs.
* ``userns`` (an ordinary user where unprivileged user namespaces are allowed): the same
  namespaces and filesystem, owned by a new user namespace; instead of switching uid the child
  drops every capability and sets no_new_privs.
* ``uid`` (root, but no namespaces: a default Docker container such as Gradescope's, without
  CAP_SYS_ADMIN and with user namespaces blocked): no new root and no PID or network namespace;
  the child writes the file under test into a private box, switches to a uid/gid of its own (no
  capabilities, no_new_privs), and the seccomp filter also refuses socket(), so it has no network.
  What it can read is decided by file permissions: the grader proves (selftest) that the course
  tree, the hidden cases, the output folder and the submissions are unreadable to that uid, and
  refuses to grade otherwise (on Gradescope `run_autograder` makes them root-only first). It can
  still see world-readable system files and /proc (other processes' command lines). /tmp and the
  IPC namespace are shared, so no child may leave anything there for a later one: its umask is
  077 and the seccomp filter denies widening a file's permissions (chmod family, umask, xattrs),
  mknod, SysV IPC and POSIX message queues; where the kernel has Landlock, it can create or write
  nothing outside its box; and once it is dead the grader removes every file its uid owns in the
  world-writable folders (`remove_files_of`). Its uid is never reused.
* ``basic`` (none of these works, e.g. an ordinary user without user namespaces): a private working directory,
  `python -I -S` and resource limits only. Nothing is hidden: the child can read whatever the
  grading user can read and signal that user's processes. `python -m grader grade` refuses this
  tier unless told `--allow-weak-sandbox`; `check()` in a notebook uses it on a student's laptop
  (the student bundle holds no solutions and no hidden cases).

In every tier:

* wall-clock limits are enforced here, by the grader: per case, per import, per exercise and per
  submission (`runner`); on expiry the whole process group is killed with SIGKILL (and, with a PID
  namespace, the kernel kills whatever is left once the namespace's init is gone);
* RLIMIT_AS (memory), RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE and RLIMIT_CORE=0 are set in the
  child; RLIMIT_NPROC only in the ``root`` tier, where the uid is the child's own;
* a seccomp filter (``root``/``userns``: required; ``basic`` on Linux: best effort) leaves the
  harness one process (no fork, vfork or clone of a process; threads only), so RLIMIT_AS and
  RLIMIT_CPU cover the child as a whole; it also denies kernel keyrings, sysinfo, flock, inotify,
  namespaces, mounts, tracing, BPF, io_uring and replacing or closing the result fds
  (`child.seccomp`);
* the child's raw stdout/stderr go to a pipe that the grader drains and caps; `print()` inside the
  child goes to an in-memory buffer capped at `output_chars`;
* the grader sends the child only the exercise's source, the cases' inputs and its own compiled
  harness (length-prefixed marshal frames on its stdin); hidden inputs are sent only after every
  public result has been received, so nothing shown to the student can carry them;
* results come back over a separate pipe (fd 3) as length-prefixed JSON stamped with a per-child
  nonce (frames the student's code writes there itself are rejected), parsed with hard size limits,
  validated by exact shape and type and decoded in linear time (`compare`) before being compared,
  in this process, with expected values the child never received;
* inside the child the student's code runs on threads of its own, away from the harness, behind an
  audit hook (`child.guard`): no module holds the harness, no frame walk reaches it, the garbage
  collector's object lists, ctypes and hand-made bytecode are refused; exception classes are
  decided by identity with the real builtins (`child.values`).

What it does not stop, honestly:

* the harness shares an interpreter with the student's code; it is out of reach through every
  Python-level path we know of, but a memory-safety bug in CPython, or a finalizer of the student's
  that the cyclic garbage collector runs on the harness's thread and that resumes a generator whose
  frame it kept, could still reach it and forge what only the child can observe: "arguments not
  mutated" and "which exception class". A forged return value still scores only if it equals a
  hidden expected value the child never saw. A call's own background thread that undoes its
  mutation before the call returns is, by what the grader can observe, not a mutation;
* CPU time is limited per process (the whole child, since it cannot fork); starving the machine of
  CPU, and timing channels through shared caches, are out of scope;
* the child sees /usr and the Python installation read-only (system files, the system's own
  site-packages): nothing of the course unless it is installed there, which `hide` then covers;
* during the hidden phase the child holds that exercise's hidden inputs in memory; it has no
  network and no persistent file system, no sibling of its submission runs at the same time, its
  output and the reasons its cases fail are never shown; which hidden cases pass is reported (one
  bit per case, by design). In the ``uid`` tier without Landlock, two children running at the same
  time (`--jobs` > 1) could still see the names of each other's files in /tmp (never their
  contents); `--jobs 1`, as on Gradescope, rules that out;
* every process of the child dies with the grader (PR_SET_PDEATHSIG at every level, checked against
  the expected parent so a grader that died first is noticed), and with a PID namespace the
  namespace's init also holds a wall-clock limit the harness cannot reach;
* two submissions graded at the same time by different workers could still signal each other
  through timing if their authors collude; `--jobs 1` rules that out;
* the ``basic`` tier hides nothing, has no network isolation, cannot reap processes that call
  setsid() and daemonize, and runs as the grading user (who could be signalled or traced);
* the kernel is shared: a kernel exploit is out of scope;
* the exercises of one submission share a child: a file that changes shared state in a way the
  baseline does not see (mutating an object in place, putting a builtin function into a module it
  imported) can still affect that student's later exercises — never another student's, and never
  for points, since every value is still judged here against expectations the child never saw.
"""

from __future__ import annotations

import fcntl
import functools
import glob
import json
import marshal
import os
import secrets
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from course_lib.checking import run_queue
from course_lib.checking.safetext import one_line

CHILD_SCRIPT = Path(__file__).with_name("_child.py")
CHILD_PACKAGE = Path(__file__).with_name("child")
TIERS = ("root", "userns", "uid", "basic")
FRAME_LIMIT = 16 * 1024 * 1024
STARVED_EXTENSION = 3.0  # a wait grows by at most 3x its timeout for time spent waiting for a CPU
MIN_EXTENSION = 0.005  # seconds: less than this is no reason to wait again
SANDBOX_UID_RANGE = (1_100_000_000, 1_900_000_000)


@dataclass(frozen=True)
class Limits:
    """Every limit the runner applies; tests shrink the timeouts."""

    case_timeout: float = 2.0
    import_timeout: float = 5.0
    max_timeouts: int = 3
    memory_mb: int = 512
    cpu_seconds: int = 30
    file_size_bytes: int = 1 << 20
    open_files: int = 64
    processes: int = 16
    output_bytes: int = 1 << 20  # raw fd 1/2 output per child before it is killed
    output_chars: int = 4000  # print() output kept per case
    result_bytes: int = 8 << 20  # all result frames of one child together
    exercise_seconds: float = 15.0  # wall clock for all of one exercise's cases, restarts included
    submission_seconds: float = 60.0  # wall clock for all exercises of one submission
    tier: str | None = None  # None: detect_tier()

    def child_limits(self) -> dict[str, int]:
        return {
            "address_space_bytes": self.memory_mb << 20,
            "cpu_seconds": self.cpu_seconds,
            "file_size_bytes": self.file_size_bytes,
            "open_files": self.open_files,
            "processes": self.processes,
            # A backstop the child cannot ignore: no child outlives its submission's wall clock.
            "wall_seconds": int(self.submission_seconds + self.import_timeout + 30),
        }


SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/run/lock", "/var/lock", "/dev/mqueue")


def remove_files_of(uid: int, places: tuple[str, ...] = SHARED_WRITABLE, depth: int = 4) -> int:
    """Remove everything `uid` owns in the world-writable folders ("uid" tier: no private /tmp).

    The child's uid is its own, so what it could create lies in a folder every user may write to:
    these, or world-writable folders below them. Called once the child is dead; returns the count."""
    removed = 0
    for place in places:
        try:
            entries = list(os.scandir(place))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid == uid:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)  # fd-based: never follows links
                else:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        continue
                removed += 1
            elif depth > 0 and entry.is_dir(follow_symlinks=False) and info.st_mode & 0o002:
                removed += remove_files_of(uid, (entry.path,), depth - 1)
    return removed


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (not the student's fault)."""


class ChildTimeout(Exception):
    pass


class ChildGone(Exception):
    """The child stopped answering: it exited, was killed, or broke the protocol."""

    def __init__(self, reason: str, exit_code: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason  # "exited" | "protocol" | "output" | "result_size" | "stalled"
        self.exit_code = exit_code


def python_executable() -> str:
    """The real interpreter (not a venv symlink), so the binds above cover it."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


@functools.lru_cache(maxsize=1)
def child_modules() -> tuple[tuple[str, bytes], ...]:
    """The child's modules, compiled once here and shipped in its config (see child/__init__)."""
    from course_lib.checking.child import MODULES

    compiled = []
    for name in MODULES:
        path = CHILD_PACKAGE / f"{name}.py"
        code = compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)
        compiled.append((name, marshal.dumps(code)))
    return tuple(compiled)


def _bind_sources() -> list[str]:
    paths = ["/usr", "/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin", "/etc/ld.so.cache"]
    executable = python_executable()
    for prefix in (sys.base_prefix, sys.base_exec_prefix, os.path.dirname(executable)):
        real = os.path.realpath(prefix)
        if not any(real == p or real.startswith(p.rstrip("/") + "/") for p in paths):
            paths.append(real)
    return paths


_TIER_LOCK = threading.Lock()
_TIER: str | None = None


def detect_tier() -> str:
    """The strongest tier that actually works here (probed once with a real child)."""
    global _TIER
    with _TIER_LOCK:
        if _TIER is None:
            candidates = ["root"] if os.geteuid() == 0 else []
            candidates.append("userns")
            if os.geteuid() == 0:
                candidates.append("uid")  # root without namespaces (a default Docker container)
            _TIER = "basic"
            for tier in candidates:
                try:
                    report = selftest(Limits(tier=tier), probe_paths=[])
                except (SandboxError, ChildGone, ChildTimeout, OSError):
                    continue
                if report.get("network", "").startswith("blocked"):
                    _TIER = tier
                    break
        return _TIER


WORKDIR_PREFIX = "course-sandbox-"
OWNER_LOCK = ".owner.lock"
_SWEPT = False
_SWEEP_LOCK = threading.Lock()  # not _TIER_LOCK: the tier probe itself starts a session


def _claim(workdir: str) -> int:
    """Lock a new working folder for this process; the lock ends with the process, however it ends.

    The lock file is locked under a private name and only then renamed to OWNER_LOCK: a sweeper
    never finds OWNER_LOCK unlocked in a live folder (opened between our create and our flock, it
    would have taken the lock first and removed the folder)."""
    private = os.path.join(workdir, f"{OWNER_LOCK}.{os.getpid()}")
    fd = os.open(private, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(private, os.path.join(workdir, OWNER_LOCK))
    return fd


def sweep_abandoned_workdirs(directory: str | None = None) -> int:
    """Remove the working folders of graders that died without cleaning up (kill -9, a lost
    container); a folder whose owner lock is still held belongs to a live session and stays.
    Returns how many were removed."""
    removed = 0
    for path in glob.glob(os.path.join(directory or tempfile.gettempdir(), WORKDIR_PREFIX + "*")):
        try:
            info = os.lstat(path)
            if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != os.geteuid():
                continue
            fd = os.open(os.path.join(path, OWNER_LOCK), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # not ours, or created a moment ago and not locked yet
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # its session is alive
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed += not os.path.exists(path)
        finally:
            os.close(fd)
    return removed


def _sweep_once() -> None:
    global _SWEPT
    with _SWEEP_LOCK:
        if _SWEPT:
            return
        _SWEPT = True
    sweep_abandoned_workdirs()


class ChildSession:
    """One sandboxed child: send it frames, receive validated-size frames, kill it."""

    def __init__(
        self,
        config: dict,
        limits: Limits,
        hide: list[str] | tuple[str, ...] = (),
    ) -> None:
        self.limits = limits
        self.tier = limits.tier or detect_tier()
        _sweep_once()
        self.workdir = tempfile.mkdtemp(prefix=WORKDIR_PREFIX)
        os.chmod(self.workdir, 0o700)
        self._owner_lock = _claim(self.workdir)
        full = dict(config)
        self._nonce = secrets.token_hex(16)  # frames without it were not written by the harness
        full["nonce"] = self._nonce
        full["grader_pid"] = os.getpid()  # the child dies with this process (PR_SET_PDEATHSIG)
        full["modules"] = child_modules()
        full["tier"] = self.tier
        full["limits"] = limits.child_limits()
        full["output_chars"] = limits.output_chars
        if self.tier in ("root", "userns"):
            binds = _bind_sources()
            full["new_root"] = os.path.join(self.workdir, "root")
            full["binds"] = binds
            # Only what would show through a bind needs covering (a course tree under /usr, say).
            full["hide"] = sorted(
                {
                    real
                    for real in (os.path.realpath(path) for path in hide)
                    if any(real.startswith(source.rstrip("/") + "/") for source in binds)
                }
            )
            full["box"] = "/box"
            if self.tier == "root":
                uid = SANDBOX_UID_RANGE[0] + secrets.randbelow(
                    SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0]
                )
                full["uid"] = full["gid"] = uid
        else:
            box = os.path.join(self.workdir, "box")
            os.mkdir(box, 0o700)
            full["box"] = box
            if self.tier == "uid":
                os.chmod(self.workdir, 0o711)  # the child's uid may pass through, not list
                uid = SANDBOX_UID_RANGE[0] + secrets.randbelow(
                    SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0]
                )
                full["uid"] = full["gid"] = uid
        self._uid = full.get("uid")
        self._result_r, result_w = os.pipe()
        self._out_r, out_w = os.pipe()
        self._buffer = bytearray()
        self._received = 0
        self._out_seen = 0
        self._out_kept = bytearray()
        self.exit_code: int | None = None
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        try:
            self.process = subprocess.Popen(
                [
                    python_executable(),
                    "-I",
                    "-S",
                    "-B",
                    "-X",
                    "utf8",
                    str(CHILD_SCRIPT),
                    str(result_w),  # the child moves it to fd 3
                ],
                stdin=subprocess.PIPE,
                stdout=out_w,
                stderr=out_w,
                pass_fds=(result_w,),
                close_fds=True,
                start_new_session=True,
                env=env,
                cwd=self.workdir,
            )
        except OSError as error:
            os.close(result_w)
            os.close(out_w)
            self._close_fds()
            shutil.rmtree(self.workdir, ignore_errors=True)
            os.close(self._owner_lock)  # only now may a sweeper take the (gone) folder
            raise SandboxError(f"не удалось запустить интерпретатор: {error}") from error
        os.close(result_w)
        os.close(out_w)
        os.set_blocking(self._result_r, False)
        os.set_blocking(self._out_r, False)
        assert self.process.stdin is not None
        self._stdin_fd = self.process.stdin.fileno()  # written raw, never through the buffer
        os.set_blocking(self._stdin_fd, False)
        try:
            self._pidfd: int | None = os.pidfd_open(self.process.pid)
        except (AttributeError, OSError):
            self._pidfd = None  # older kernels: poll with waitid()
        self._run_queue = run_queue.RunQueue(self.process.pid)  # its session: start_new_session
        self.starved_total = 0.0
        """Seconds of run-queue delay `recv` has added to its waits so far (see `recv`)."""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._result_r, selectors.EVENT_READ, "result")
        self._selector.register(self._out_r, selectors.EVENT_READ, "out")
        self._closed = False
        try:
            self.send(full)
        except ChildGone:
            pass  # the child died before reading its config; recv() reports why
        except BaseException:
            self.kill()
            self.close()
            raise

    def new_account(self) -> None:
        """Start counting raw output and result bytes afresh: the limits are per exercise, and
        one child may serve several exercises one after another."""
        self._out_seen = 0
        self._received = len(self._buffer)

    def send(self, frame: dict, timeout: float = 10.0) -> None:
        """Write one frame to the child's stdin; a child that stops reading cannot stall us."""
        data = marshal.dumps(frame)  # grader -> child only: the child never sends marshal data
        view = memoryview(len(data).to_bytes(4, "big") + data)
        deadline = time.monotonic() + timeout
        while view:
            try:
                written = os.write(self._stdin_fd, view)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([], [self._stdin_fd], [], remaining)[1]:
                    raise ChildGone("stalled") from None
                continue
            except (BrokenPipeError, OSError, ValueError) as error:
                raise ChildGone("exited") from error
            view = view[written:]

    def recv(self, timeout: float) -> dict:
        """The next result frame; ChildTimeout or ChildGone otherwise.

        `timeout` is the child's own time: seconds it ran or slept, not seconds it sat runnable
        while other processes had the CPUs. At the deadline the run-queue delay the kernel counted
        for the child's processes during this wait (`run_queue.Watch`) is added, up to
        `STARVED_EXTENSION` times the timeout, so a loaded machine does not turn a passing case into
        a timeout, while a hang — busy or asleep — accrues no such delay and still stops at once."""
        deadline = time.monotonic() + timeout
        watch = run_queue.Watch(self._run_queue)
        extended = 0.0
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                starved = min(watch.new_delay(), timeout * STARVED_EXTENSION - extended)
                if starved < MIN_EXTENSION:
                    raise ChildTimeout
                deadline += starved
                extended += starved
                self.starved_total += starved  # the runner gives the same back to the exercise's budget
                continue
            for key, _ in self._selector.select(remaining):
                if key.data == "out":
                    self._drain_output()
                else:
                    self._drain_results()

    def _drain_output(self) -> None:
        while True:
            try:
                chunk = os.read(self._out_r, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self._selector.unregister(self._out_r)
                return
            self._out_seen += len(chunk)
            room = 2000 - len(self._out_kept)
            if room > 0:
                self._out_kept += chunk[:room]
            if self._out_seen > self.limits.output_bytes:
                raise ChildGone("output")

    def _drain_results(self) -> None:
        while True:
            try:
                chunk = os.read(self._result_r, 65536)
            except BlockingIOError:
                return
            if not chunk:
                # EOF: everything the child will ever say is in the buffer.
                if self._take_frame(peek=True) is None:
                    raise ChildGone("exited", self._reap())
                return
            self._received += len(chunk)
            if self._received > self.limits.result_bytes:
                raise ChildGone("result_size")
            self._buffer += chunk

    def _take_frame(self, peek: bool = False) -> dict | None:
        if len(self._buffer) < 4:
            return None
        size = int.from_bytes(self._buffer[:4], "big")
        if size > FRAME_LIMIT:
            raise ChildGone("protocol")
        if len(self._buffer) < 4 + size:
            return None
        if peek:
            return {}
        body = bytes(self._buffer[4 : 4 + size])
        del self._buffer[: 4 + size]
        try:
            frame = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise ChildGone("protocol") from error
        if type(frame) is not dict or frame.pop("k", None) != self._nonce:
            raise ChildGone("protocol")
        return frame

    def _wait_exit(self, timeout: float) -> bool:
        """Wait until the launcher has exited, without reaping it (so its group id stays ours)."""
        if self._pidfd is not None:
            readable, _, _ = select.select([self._pidfd], [], [], timeout)
            return bool(readable)
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            if hasattr(os, "waitid"):
                try:
                    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
                    if os.waitid(os.P_PID, self.process.pid, flags) is not None:
                        return True
                except ChildProcessError:
                    return True
            elif self.process.poll() is not None:  # macOS: reaps, so no group kill afterwards
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.02)

    def _reap(self, wait: float = 1.0) -> int | None:
        if self._wait_exit(wait):
            self._killpg()  # the exited launcher still holds its group id: clear out stragglers
            self.exit_code = self.process.wait()
        else:
            self.kill()
        return self.exit_code

    @property
    def raw_output(self) -> str:
        return bytes(self._out_kept).decode("utf-8", "replace")

    def _killpg(self) -> None:
        # Only while the launcher is unreaped (running or a zombie) is its pid surely still
        # this group's id; Popen.returncode is set once it has been reaped.
        if self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        self._killpg()
        try:
            self.exit_code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        """End the child (politely if it is still listening) and remove every trace of it."""
        if self._closed:
            return
        self._closed = True
        try:
            try:
                self.send({"type": "end"}, timeout=0.2)
            except ChildGone:
                pass
            try:
                if self.process.stdin is not None:
                    self.process.stdin.close()
            except OSError:
                pass
            self._wait_exit(0.5)
        finally:
            # Always kill the group: stray children of the student's code must not outlive the run.
            self._killpg()
            try:
                self.exit_code = self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self._selector.close()
            self._close_fds()
            shutil.rmtree(self.workdir, ignore_errors=True)
            os.close(self._owner_lock)  # only now may a sweeper take the (gone) folder
            if self.tier == "uid" and self.exit_code is not None:
                remove_files_of(self._uid)  # no later child may see what this one left in /tmp

    def _close_fds(self) -> None:
        if getattr(self, "_run_queue", None) is not None:
            self._run_queue.close()
        for fd in (self._result_r, self._out_r, getattr(self, "_pidfd", None)):
            if fd is None:
                continue
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> ChildSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def selftest(
    limits: Limits, probe_paths: list[str], hide: list[str] = (), probe_syscalls: bool = False
) -> dict:
    """Start a child with no student code and report what it can reach (tier, uid, files, net);
    with `probe_syscalls`, also the errno of each syscall the seccomp filter must refuse."""
    config = {"kind": "selftest", "probe_paths": probe_paths, "probe_syscalls": probe_syscalls}
    session = ChildSession(config, limits, hide)
    try:
        frame = session.recv(timeout=10)
    finally:
        session.close()
    if frame.get("type") == "sandbox_error":
        raise SandboxError(one_line(str(frame.get("message")))[:300])
    if frame.get("type") != "selftest":
        raise SandboxError(f"unexpected self-test answer: {one_line(repr(frame))[:300]}")
    frame["tier"] = session.tier
    return frame
