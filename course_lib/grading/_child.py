"""The grader's sandboxed child: launcher, namespace init and harness in one stdlib-only script.

The grader starts it as `python -I -S -B -X utf8 _child.py` (never importing it), with
  fd 0  frames from the grader (length-prefixed marshal data: trusted direction, and no `json`
        import, which costs a child 5 ms): the config, then batches of case inputs;
  fd 1  and fd 2: one capped pipe the grader drains (raw output of the student's code);
  fd 3  the result pipe: length-prefixed JSON frames back to the grader.

What happens, in order (see `course_lib.grading.sandbox` for the grader's side and the honest list of
what this does and does not stop):
  1. read the config frame;
  2. tier "root" / "userns": new mount, PID, network, IPC and UTS namespaces (plus a user namespace
     for "userns"); a fresh tmpfs becomes the root filesystem with read-only binds of /usr, the
     Python installation and a few device nodes only, via pivot_root, so the course tree, the
     hidden cases, the solutions and other submissions do not exist for the child;
     tier "basic": only a private working directory (nothing is hidden);
  3. resource limits (address space, CPU seconds, file size, open files, processes, no core dumps);
  4. drop privileges: "root" switches to an unprivileged uid/gid unique to this child and clears
     supplementary groups; "userns" drops every capability; all tiers set no_new_privs;
  5. with a PID namespace: fork an init (PID 1 there) that forks the harness and exits as soon as
     the harness does, so the kernel kills anything the student's code left running;
  6. the harness: import the student's file from the private box, then run each batch of cases and
     report every result as plain tagged data. Expected results never come here: only inputs.

Everything the harness needs is bound to local names before the student's module is imported, so
rebinding builtins or stdlib attributes at import time does not change how results are encoded.
This is robustness, not a security boundary: the student's code runs in this same interpreter and
can, with deliberate effort, make the child claim anything. The grader therefore treats every frame
as untrusted data (exact shape and type checks) and compares it with expected values it never sent.
"""

import marshal
import os
import sys

try:
    from _json import encode_basestring_ascii as _quote  # C, no `re` import
except ImportError:  # pragma: no cover - every CPython build has _json
    from json.encoder import py_encode_basestring_ascii as _quote

# --- bound before any student code runs ------------------------------------------------------
_type = type
_len = len
_str = str
_int = int
_float = float
_bool = bool
_list = list
_tuple = tuple
_dict = dict
_isinstance = isinstance
_BaseException = BaseException
_MemoryError = MemoryError
_RecursionError = RecursionError
_write = os.write
_read = os.read
_close = os.close
_exit = os._exit
_dict_items = dict.items
_getattr = getattr
_callable = callable
_enumerate = enumerate
_zip = zip
_compile = compile
_exec = exec
_memoryview = memoryview
_SyntaxError = SyntaxError
_TypeError = TypeError
_RuntimeError = RuntimeError
_type_mro = type.__dict__["__mro__"].__get__
_type_name = type.__dict__["__qualname__"].__get__
_type_module = type.__dict__["__module__"].__get__
_float_repr = float.__repr__
_INFINITIES = (float("inf"), float("-inf"))
_int_repr = int.__repr__
_loads = marshal.loads

RESULT_FD = 3
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_STRING_CHARS = 4_000_000
MAX_INT_BITS = 13_000  # under 4,300 decimal digits: int <-> str limit on both sides
EXC_MESSAGE_CHARS = 300

# --- framing ----------------------------------------------------------------------------------


def _read_exact(fd, size):
    chunks = []
    while size:
        chunk = _read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= _len(chunk)
    return b"".join(chunks)


def _recv(fd):
    header = _read_exact(fd, 4)
    if header is None:
        return None
    body = _read_exact(fd, _int.from_bytes(header, "big"))
    if body is None:
        return None
    return _loads(body)


def _to_json(value):
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
        return "[" + ",".join([_to_json(item) for item in value]) + "]"
    if kind is _dict:
        return "{" + ",".join([_quote(k) + ":" + _to_json(v) for k, v in _dict_items(value)]) + "}"
    raise _TypeError("unexpected value in a result frame")


def _send(message):
    data = _to_json(message).encode("ascii")
    data = _len(data).to_bytes(4, "big") + data
    view = _memoryview(data)
    while view:
        written = _write(RESULT_FD, view)
        view = view[written:]


# --- stage 2: namespaces and a minimal root filesystem -----------------------------------------

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4


class _Libc:
    def __init__(self):
        import ctypes

        self.ctypes = ctypes
        self.lib = ctypes.CDLL(None, use_errno=True)

    def check(self, result, what):
        if result != 0:
            errno = self.ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")

    def unshare(self, flags):
        self.check(self.lib.unshare(self.ctypes.c_int(flags)), "unshare")

    def mount(self, source, target, fstype, flags, data=None):
        enc = lambda value: None if value is None else value.encode()  # noqa: E731
        result = self.lib.mount(
            enc(source), enc(target), enc(fstype), self.ctypes.c_ulong(flags), enc(data)
        )
        self.check(result, f"mount {target}")

    def umount2(self, target, flags):
        self.check(self.lib.umount2(target.encode(), self.ctypes.c_int(flags)), f"umount {target}")

    def pivot_root(self, new_root, put_old):
        self.check(self.lib.pivot_root(new_root.encode(), put_old.encode()), "pivot_root")

    def prctl(self, option, value):
        c_ulong = self.ctypes.c_ulong
        self.check(
            self.lib.prctl(option, c_ulong(value), c_ulong(0), c_ulong(0), c_ulong(0)), "prctl"
        )

    def drop_all_capabilities(self):
        ctypes = self.ctypes

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [
                ("effective", ctypes.c_uint32),
                ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32),
            ]

        header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit data words
        data = (Data * 2)()
        self.check(self.lib.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _write_file(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces(libc, config):
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if config["tier"] == "userns":
        outer_uid, outer_gid = os.getuid(), os.getgid()
        libc.unshare(flags | CLONE_NEWUSER)
        _write_file("/proc/self/setgroups", "deny")
        _write_file("/proc/self/uid_map", f"0 {outer_uid} 1")
        _write_file("/proc/self/gid_map", f"0 {outer_gid} 1")
    else:
        libc.unshare(flags)
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)


def _bind_readonly(libc, source, target):
    libc.mount(source, target, None, MS_BIND | MS_REC)
    libc.mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _build_root(libc, config):
    """A tmpfs root holding read-only binds of what Python needs, and an empty writable box."""
    new_root = config["new_root"]
    os.makedirs(new_root, exist_ok=True)
    libc.mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    for source in config["binds"]:
        if not os.path.lexists(source):
            continue
        target = new_root + source
        if os.path.islink(source):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.lexists(target):
                os.symlink(os.readlink(source), target)
            continue
        if os.path.isdir(source):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.exists(target):
                open(target, "w").close()
        _bind_readonly(libc, source, target)
    # Anything secret that still shows through a bind (a course tree under /usr, say) is covered.
    for secret in config["hide"]:
        target = new_root + secret
        if os.path.isdir(target):
            libc.mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k")
        elif os.path.exists(target):
            libc.mount("/dev/null", target, None, MS_BIND)
    os.makedirs(new_root + "/dev", exist_ok=True)
    for device in ("null", "zero", "random", "urandom"):
        target = f"{new_root}/dev/{device}"
        open(target, "w").close()
        libc.mount(f"/dev/{device}", target, None, MS_BIND)
    for name, mode in (("box", 0o700), ("tmp", 0o1777)):
        os.mkdir(f"{new_root}/{name}")
        os.chmod(f"{new_root}/{name}", mode)
    return new_root


def _pivot_into(libc, new_root):
    os.chdir(new_root)
    libc.pivot_root(".", ".")  # the old root now sits on top of "/": detach it for good
    libc.umount2(".", MNT_DETACH)
    os.chdir("/")


# --- stage 3 and 4: limits and privileges -----------------------------------------------------


def _apply_limits(limits, tier):
    import resource

    def cap(kind, value):
        """Lower both soft and hard limits to `value` (never raise them)."""
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):
            if tier != "basic":
                raise  # the namespaced tiers promise these limits
            # basic tier on other systems (macOS refuses RLIMIT_AS, say): best effort

    cap(resource.RLIMIT_AS, limits["address_space_bytes"])
    # soft < hard: the kernel sends SIGXCPU first, so a CPU-limit stop is told apart from SIGKILL.
    cpu = limits["cpu_seconds"]
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or hard > cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    cap(resource.RLIMIT_FSIZE, limits["file_size_bytes"])
    cap(resource.RLIMIT_NOFILE, limits["open_files"])
    cap(resource.RLIMIT_CORE, 0)
    if tier == "root":
        # Counted per real uid, and this uid belongs to this child alone.
        cap(resource.RLIMIT_NPROC, limits["processes"])


def _drop_privileges(libc, config):
    if config["tier"] == "root":
        uid, gid = config["uid"], config["gid"]
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # from root to a non-zero uid: every capability is gone
    elif config["tier"] == "userns":
        libc.drop_all_capabilities()
    if libc is not None:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1)


def _become_namespace_init():
    """Fork the harness and wait for it as PID 1; return only in the harness process."""
    harness = os.fork()
    if harness == 0:
        return
    os.closerange(0, 4096)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            _exit(70)
        if pid == harness:
            if os.WIFSIGNALED(status):
                _exit(128 + os.WTERMSIG(status))
            _exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def _wait_and_mirror(pid):
    """The launcher outside the PID namespace: exit the way the namespace's init did."""
    os.closerange(0, 4096)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        _exit(128 + os.WTERMSIG(status))
    _exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


# --- stage 6: the harness ---------------------------------------------------------------------


class _CappedText:
    """Stands in for sys.stdout/sys.stderr: keeps the first `limit` characters, counts the rest."""

    def __init__(self, limit):
        self.limit = limit
        self.parts = []
        self.kept = 0
        self.total = 0
        self.encoding = "utf-8"
        self.errors = "strict"

    def write(self, text):
        if _type(text) is not _str:
            raise _TypeError(f"write() argument must be str, not {_type_name(_type(text))}")
        size = _len(text)
        self.total += size
        room = self.limit - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += _len(piece)
        return size

    def flush(self):
        return None

    def isatty(self):
        return False

    def writable(self):
        return True

    def take(self):
        text = "".join(self.parts)
        total = self.total
        self.parts, self.kept, self.total = [], 0, 0
        return text, total


class _TooBig(Exception):
    pass


def _encode_value(value):
    """Plain data as tagged JSON-able lists, by exact type; anything else becomes ["x", type]."""
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
        return ["x", _safe_type_name(kind)]

    try:
        return walk(value, 0)
    except (_TooBig, _RecursionError):
        return ["x", "<слишком большой или вложенный объект>"]


def _safe_type_name(kind):
    try:
        name = _type_name(kind)
        return name[:80] if _type(name) is _str else "?"
    except _BaseException:
        return "?"


def _describe_exception(error):
    mro = []
    try:
        for klass in _type_mro(_type(error)):
            module = _type_module(klass)
            mro.append([module if _type(module) is _str else "?", _safe_type_name(klass)])
    except _BaseException:
        mro = [["?", "?"]]
    try:
        message = _str(error)
        message = message[:EXC_MESSAGE_CHARS] if _type(message) is _str else ""
    except _BaseException:
        message = "<str() исключения не сработал>"
    return {"mro": mro, "message": message}


def _outcome_of(call):
    try:
        value = call()
    except _BaseException as error:  # SystemExit, KeyboardInterrupt and MemoryError included
        return {"kind": "raise", "exc": _describe_exception(error)}
    return {"kind": "return", "value": _encode_value(value)}


# Deterministic stand-ins for injected dependencies (a tokenizer, a summarizing model).


def _fake_factory(name):
    calls = [0]

    def require_str(text, who):
        if _type(text) is not _str:
            raise _TypeError(f"{who} принимает только строку")

    def once(who):
        calls[0] += 1
        if calls[0] > 1:
            raise _RuntimeError(f"{who} вызван второй раз, а нужен ровно один вызов")

    def chars(text):
        require_str(text, "count_text")
        return _len(text)

    def words(text):
        require_str(text, "count_text")
        return _len(text.split())

    def echo(text):
        require_str(text, "summarize")
        once("summarize")
        return text

    def padded(text):
        require_str(text, "summarize")
        once("summarize")
        return f"\n  Сводка: {_len(text.splitlines())} строк(и)  \n"

    def forbidden(text):
        raise _RuntimeError("summarize не должен был вызываться")

    def blank(text):
        once("summarize")
        return "  \n "

    def not_str(text):
        once("summarize")
        return 42

    fakes = {
        "chars": chars,
        "words": words,
        "echo": echo,
        "padded": padded,
        "forbidden": forbidden,
        "blank": blank,
        "not_str": not_str,
    }
    if name not in fakes:
        raise ValueError(f"unknown fake {name!r}")
    return fakes[name]


def _materialize(value):
    """JSON input -> fresh Python objects; {"$fake": name} becomes a deterministic callable."""
    kind = _type(value)
    if kind is _dict:
        if _len(value) == 1 and "$fake" in value:
            return _fake_factory(value["$fake"])
        return {key: _materialize(item) for key, item in value.items()}
    if kind is _list:
        return [_materialize(item) for item in value]
    return value


def _is_fake(value):
    return _type(value) is _dict and _len(value) == 1 and "$fake" in value


def _tamper(value):
    """What a careless caller does to a list it got back: edit its dicts and append to it."""
    if _type(value) is _list:
        for item in value:
            if _type(item) is _dict:
                item["content"] = "<изменено вызывающим кодом>"
                item["role"] = "tampered"
        value.append({"role": "user", "content": "<лишнее сообщение вызывающего кода>"})
    elif _type(value) is _dict:
        value["tampered"] = True


def _run_function_case(entry, case):
    raw_args = case["args"]
    args = [_materialize(item) for item in raw_args]
    box = [None]

    def call():
        box[0] = entry(*args)
        return box[0]

    outcome = _outcome_of(call)
    result_is_arg = None
    returned = box[0]
    box[0] = None
    if _type(returned) is _list or _type(returned) is _dict:
        for index, arg in _enumerate(args):
            if returned is arg:
                result_is_arg = index
                break
    after = [None if _is_fake(raw) else _encode_value(arg) for raw, arg in _zip(raw_args, args)]
    return {"outcome": outcome, "args_after": after, "result_is_arg": result_is_arg}


def _run_class_case(entry, case):
    holder = []
    init_args = [_materialize(item) for item in case.get("init", [])]
    init = _outcome_of(lambda: holder.append(entry(*init_args)))
    if init["kind"] != "return":
        return {"init": init, "steps": []}
    instance = holder[0]
    returned = []
    steps = []
    for step in case["steps"]:
        if "tamper" in step:
            try:
                _tamper(returned[step["tamper"]])
                steps.append({"kind": "tampered"})
            except _BaseException as error:
                steps.append({"kind": "raise", "exc": _describe_exception(error)})
            returned.append(None)
            continue
        args = [_materialize(item) for item in step.get("args", [])]
        box = [None]

        def call(name=step["call"], args=args, box=box):
            value = _getattr(instance, name)(*args)
            box[0] = value
            return value

        outcome = _outcome_of(call)
        steps.append(outcome)
        returned.append(box[0])
    return {"init": init, "steps": steps}


def _import_student(config):
    """Compile and execute the student's file; return (module, entry) or send import_error."""
    import types

    name = config["module"]
    path = f"{config['box']}/{name}.py"
    try:
        code = _compile(config["source"], path, "exec", dont_inherit=True)
    except _BaseException as error:  # SyntaxError, ValueError (NUL bytes), MemoryError, RecursionError
        detail = _describe_exception(error)
        line = None
        if _isinstance(error, _SyntaxError):
            line = error.lineno
            detail["message"] = error.msg if _type(error.msg) is _str else ""
        detail["line"] = line if _type(line) is _int else None
        _send({"type": "import_error", "kind": "syntax", **detail})
        return None
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        _exec(code, module.__dict__)
    except _BaseException as error:  # SystemExit and KeyboardInterrupt at import included
        _send({"type": "import_error", "kind": "exception", **_describe_exception(error)})
        return None
    entry = module.__dict__.get(config["entry"])
    if config["kind"] == "class":
        wrong = not _isinstance(entry, _type)
    else:
        wrong = entry is None or not _callable(entry)
    if wrong:
        _send({"type": "import_error", "kind": "missing", "mro": [], "message": ""})
        return None
    return module, entry


def _harness(config, frames_fd):
    capture = _CappedText(config["output_chars"])
    sys.stdout = capture
    sys.stderr = capture
    if config["kind"] == "selftest":
        _send({"type": "selftest", **_selftest(config)})
        _exit(0)
    sys.path[:0] = [config["box"]]
    loaded = _import_student(config)
    if loaded is None:
        _exit(0)
    module, entry = loaded
    capture.take()
    _send({"type": "ready"})
    while True:
        frame = _recv(frames_fd)
        if frame is None or frame.get("type") == "end":
            _exit(0)
        for case in frame["cases"]:
            if config["kind"] == "class":
                report = _run_class_case(entry, case)
            else:
                report = _run_function_case(entry, case)
            text, total = capture.take()
            _send({"type": "case", "i": case["i"], "out": text, "out_total": total, **report})
        _send({"type": "batch_done"})


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
    return {"uid": os.getuid(), "pid": os.getpid(), "readable": readable, "network": network}


def main():
    given_fd = _int(sys.argv[1])
    if given_fd != RESULT_FD:
        os.dup2(given_fd, RESULT_FD)
        os.close(given_fd)
    frames_fd = os.dup(0)
    config = _recv(frames_fd)
    if config is None:
        _exit(64)
    tier = config["tier"]
    libc = _Libc() if tier in ("root", "userns") else None
    try:
        if libc is not None:
            _enter_namespaces(libc, config)
            new_root = _build_root(libc, config)
            box_on_host = new_root + "/box"
            _write_student_file(config, box_on_host)
            if tier == "root":
                os.chown(box_on_host, config["uid"], config["gid"])
                if config["kind"] != "selftest":
                    student_file = f"{box_on_host}/{config['module']}.py"
                    os.chown(student_file, config["uid"], config["gid"])
            _pivot_into(libc, new_root)
            config["box"] = "/box"
        else:
            box = config["box"]
            _write_student_file(config, box)
        os.chdir(config["box"])
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail instead of killing
        _apply_limits(config["limits"], tier)
        _drop_privileges(libc, config)
        if libc is not None:
            launcher_child = os.fork()  # the first child of unshare(CLONE_NEWPID) is PID 1 there
            if launcher_child != 0:
                _wait_and_mirror(launcher_child)
            _become_namespace_init()
    except _BaseException as error:
        try:
            _send({"type": "sandbox_error", "message": f"{_type(error).__name__}: {error}"})
        finally:
            _exit(71)
    os.environ.clear()
    os.environ.update({"HOME": config["box"], "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"})
    _harness(config, frames_fd)


def _write_student_file(config, box):
    if config["kind"] == "selftest":
        return
    path = f"{box}/{config['module']}.py"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        data = config["source"].encode("utf-8", "surrogatepass")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


if __name__ == "__main__":
    main()
