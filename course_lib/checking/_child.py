"""The grader's sandboxed child: the script the interpreter starts; everything else arrives as code.

The grader starts it as `python -I -S -B -X utf8 _child.py RESULT_FD` (never importing it), with
  fd 0  frames from the grader (length-prefixed marshal data, the trusted direction): first the
        config, which carries the compiled modules of `course_lib/checking/child/` and a nonce, then
        batches of case inputs (read from fd 4 once fd 0 is /dev/null);
  fd 1  and fd 2: one capped pipe the grader drains (raw output of the student's code);
  fd 3  the result pipe: length-prefixed JSON frames back to the grader, each stamped with the nonce.

What happens, in order (see `course_lib.checking.sandbox` for the grader's side and the honest list of
what this does and does not stop):
  1. read the config frame and load the child's modules from it (never into sys.modules);
  2. tier "root" / "userns": new mount, PID, network, IPC and UTS namespaces (plus a user namespace
     for "userns") and a fresh tmpfs root with read-only binds of /usr and the Python installation
     only; tier "uid": a private box owned by the child's own uid (file permissions hide the rest);
     tier "basic": a private working directory (nothing is hidden);
  3. resource limits; 4. drop privileges and set no_new_privs;
  5. with a PID namespace: an init (PID 1 there) forks the harness and exits as soon as it does;
  6. in the harness: the seccomp filter (one process, no kernel-global state), the audit guard, then
     the student's files and the cases (`child.harness`): an exercise is imported when the grader
     asks for it, then its batches of cases run; one child serves every exercise of a submission.
"""

import marshal
import os
import sys

RESULT_FD = 3
FRAMES_FD = 4


def _read_exact(fd, size):
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_config():
    header = _read_exact(0, 4)
    body = _read_exact(0, int.from_bytes(header, "big")) if header else None
    return marshal.loads(body) if body else None


def _load_modules(compiled):
    modules = {}
    for name, code in compiled:
        module = type(sys)(f"sandbox_{name}")
        exec(marshal.loads(code), module.__dict__)
        modules[name] = module
    return modules


def main():
    given_fd = int(sys.argv[1])
    if given_fd != RESULT_FD:
        os.dup2(given_fd, RESULT_FD)
        os.close(given_fd)
    config = _read_config()
    if config is None:
        os._exit(64)
    os.dup2(0, FRAMES_FD)
    m = _load_modules(config.pop("modules"))
    send = m["framing"].make_sender(config.pop("nonce"))
    try:
        libc = _prepare(m["namespaces"], config)
        _apply_seccomp(m["seccomp"], libc, config["tier"])
    except BaseException as error:
        try:
            send({"type": "sandbox_error", "message": f"{type(error).__name__}: {error}"})
        finally:
            os._exit(71)
    os.environ.clear()
    os.environ.update({"HOME": config["box"], "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"})
    _run_harness(m, config, send)


def _prepare(ns, config):
    """Stages 2 to 5; returns (in the harness process only) the libc handle or None."""
    tier = config["tier"]
    libc = ns.Libc() if tier in ("root", "userns", "uid") else None
    if tier in ("root", "userns"):
        ns.enter_namespaces(libc, config)
        new_root = ns.build_root(libc, config)
        box_on_host = new_root + "/box"
        written = ns.write_student_files(config, box_on_host)
        if tier == "root":
            for path in [box_on_host, *written]:
                os.chown(path, config["uid"], config["gid"])
        ns.pivot_into(libc, new_root)
        config["box"] = "/box"
    else:
        written = ns.write_student_files(config, config["box"])
        if tier == "uid":
            for path in [config["box"], *written]:
                os.chown(path, config["uid"], config["gid"])
    os.chdir(config["box"])
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail instead of killing
    ns.apply_limits(config["limits"], tier)
    os.umask(0o077)  # nothing the child creates is readable by another uid (chmod is denied in "uid")
    ns.drop_privileges(libc, config)
    if tier == "uid":
        config["landlock"] = ns.restrict_writes_to_box(libc, config["box"])
    if libc is None and sys.platform == "linux":
        libc = ns.Libc()  # "basic": only for the parent-death signal below
        ns.die_with_parent(libc, config["grader_pid"])
        return None
    ns.die_with_parent(libc, config["grader_pid"])
    if tier in ("root", "userns"):
        launcher_child = os.fork()  # the first child of unshare(CLONE_NEWPID) is PID 1 there
        if launcher_child != 0:
            ns.wait_and_mirror(launcher_child)
        ns.die_with_parent(libc, None)  # its parent is outside the namespace: getppid() is 0
        ns.become_namespace_init(libc, config["limits"]["wall_seconds"])
    return libc


def _apply_seccomp(seccomp, libc, tier):
    """Required in the namespaced tiers; best effort in "basic" (Linux with seccomp only)."""
    # Without a network namespace ("uid"), the filter is what keeps the child off the network.
    program = seccomp.build(os.uname().machine, deny_network=tier == "uid")
    if tier != "basic":
        if program is None:
            raise OSError(f"нет фильтра seccomp для архитектуры {os.uname().machine}")
        seccomp.install(program)
        return
    if program is None or sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(38, ctypes.c_ulong(1), ctypes.c_ulong(0),
                                                ctypes.c_ulong(0), ctypes.c_ulong(0))  # fmt: skip
        seccomp.install(program)
    except (OSError, AttributeError):
        pass


def _run_harness(m, config, send):
    import _thread
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # no KeyboardInterrupt injected into the harness
    tools = m["isolated"].build()
    recv = None
    try:
        if config["kind"] == "selftest":
            send({"type": "selftest", **_selftest(config)})
            os._exit(0)
        permit = m["guard"].install(_thread.get_ident())
        recv = m["framing"].make_receiver(FRAMES_FD, permit)
        harness = m["harness"].Harness(config, send, recv, m["values"], tools)
        sys.stdout = sys.stderr = harness.capture
        sys.path[:0] = [config["box"]]
        harness.serve()
    except BaseException:
        os._exit(70)  # the harness itself failed (or was made to): report nothing


def _selftest(config):
    """What the sandbox lets a child see: used by the grader's self-check and the test suite."""
    readable = []
    for path in config["probe_paths"]:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                with open(path, "rb") as handle:
                    handle.read(1)
            readable.append(path)
        except OSError:
            pass
    network = "blocked"
    try:
        import socket

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(0.5)
        try:
            sock.connect(("1.1.1.1", 53))
            network = "open"
        except OSError as error:
            network = f"blocked: {error.strerror or error}"
        finally:
            sock.close()
    except OSError as error:
        network = f"blocked: {error}"
    report = {"uid": os.getuid(), "pid": os.getpid(), "readable": readable, "network": network,
              "landlock": config.get("landlock", 0)}  # fmt: skip
    if config.get("probe_syscalls"):
        report["syscalls"] = _probe_syscalls()
    return report


def _probe_syscalls():
    """errno of each syscall the seccomp filter must refuse (0 = allowed), and that threads work."""
    import ctypes
    import threading

    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": {"fork": 57, "clone": 56, "add_key": 248, "keyctl": 250, "request_key": 249,
                     "sysinfo": 99, "unshare": 272, "flock": 73, "dup2": 33, "close": 3},
          "aarch64": {"clone": 220, "add_key": 217, "keyctl": 219, "request_key": 218,
                      "sysinfo": 179, "unshare": 97, "flock": 32, "close": 57}}  # fmt: skip
    table = nr.get(os.uname().machine, {})
    buffer = ctypes.create_string_buffer(256)
    calls = {
        "fork": (),
        "clone": (17, 0, 0, 0, 0),  # SIGCHLD: a plain fork through clone
        "add_key": (b"user", b"grader-probe", b"x", 1, -3),  # KEY_SPEC_SESSION_KEYRING
        "keyctl": (0, -3, 0, 0, 0),  # KEYCTL_GET_KEYRING_ID
        "request_key": (b"user", b"grader-probe", None, 0),
        "sysinfo": (buffer,),
        "unshare": (0x10000000,),  # CLONE_NEWUSER
        "flock": (0, 2),
        "dup2": (0, 3),
        "close": (4,),
    }
    result = {}
    for name, number in table.items():
        ctypes.set_errno(0)
        args = [ctypes.c_long(a) if type(a) is int else a for a in calls[name]]
        value = libc.syscall(ctypes.c_long(number), *args)
        if value == 0 and name in ("fork", "clone"):
            os._exit(0)  # a child process exists after all: let it vanish, the parent reports
        result[name] = ctypes.get_errno() if value == -1 else 0
    box = []
    thread = threading.Thread(target=lambda: box.append(1))
    thread.start()
    thread.join()
    result["thread"] = 0 if box == [1] else -1
    return result


if __name__ == "__main__":
    main()
