"""Stages 2-5 of the child: namespaces, a minimal root filesystem, limits, privileges, an init.

Moved here unchanged from `_child.py` (see `course_lib.checking.sandbox` for what each tier means).
"""

import os

_exit = os._exit


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
PR_SET_PDEATHSIG = 1
SIGKILL = 9


class Libc:
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


def enter_namespaces(libc, config):
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


def build_root(libc, config):
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


def pivot_into(libc, new_root):
    os.chdir(new_root)
    libc.pivot_root(".", ".")  # the old root now sits on top of "/": detach it for good
    libc.umount2(".", MNT_DETACH)
    os.chdir("/")


# --- stage 3 and 4: limits and privileges -----------------------------------------------------


def apply_limits(limits, tier):
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
    if tier in ("root", "uid"):
        # Counted per real uid, and this uid belongs to this child alone.
        cap(resource.RLIMIT_NPROC, limits["processes"])


def drop_privileges(libc, config):
    if config["tier"] in ("root", "uid"):
        uid, gid = config["uid"], config["gid"]
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # from root to a non-zero uid: every capability is gone
    elif config["tier"] == "userns":
        libc.drop_all_capabilities()
    if libc is not None:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1)


def die_with_parent(libc, expected_parent):
    """SIGKILL this process when its parent dies (a grader killed with -9 leaves no orphan).

    Set at every level, after the last credential change (which clears it). If the parent died
    before the call, the signal will never come: `expected_parent` (None: not knowable from here,
    as for a PID namespace's init) tells whether it is still the same process."""
    if libc is None:
        return
    libc.prctl(PR_SET_PDEATHSIG, SIGKILL)
    if expected_parent is not None and os.getppid() != expected_parent:
        _exit(75)


def become_namespace_init(libc, wall_seconds):
    """Fork the harness and wait for it as PID 1; return only in the harness process.

    The init also holds a wall-clock limit the harness cannot touch (a sleeper never reaches the CPU
    limit): at expiry it exits, and the kernel kills everything left in the PID namespace."""
    harness = os.fork()
    if harness == 0:
        die_with_parent(libc, 1)
        return
    os.closerange(0, 4096)
    import signal

    signal.signal(signal.SIGALRM, lambda *_: _exit(128 + signal.SIGALRM))
    signal.alarm(max(1, int(wall_seconds)))
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            _exit(70)
        if pid == harness:
            if os.WIFSIGNALED(status):
                _exit(128 + os.WTERMSIG(status))
            _exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def wait_and_mirror(pid):
    """The launcher outside the PID namespace: exit the way the namespace's init did."""
    os.closerange(0, 4096)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        _exit(128 + os.WTERMSIG(status))
    _exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def write_student_files(config, box):
    """Each exercise's file into the box (the harness compiles the source it was sent; the file is
    what tracebacks and `inspect` read). Returns the paths written."""
    paths = []
    for spec in config.get("exercises", ()):
        path = f"{box}/{spec['module']}.py"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            data = spec["source"].encode("utf-8", "surrogatepass")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        paths.append(path)
    return paths


# --- the "uid" tier: writes only inside the box (Landlock, where the kernel has it) --------------

_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_WRITES = (
    0x2 | 0x10 | 0x20 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x1000
)  # WRITE_FILE, REMOVE_DIR/FILE, MAKE_CHAR/DIR/REG/SOCK/FIFO/BLOCK/SYM (ABI 1)
_LANDLOCK_REFER, _LANDLOCK_TRUNCATE = 0x2000, 0x4000  # ABI 2, ABI 3


def restrict_writes_to_box(libc, box):
    """Without a mount namespace, /tmp is shared with every later child: with Landlock (Linux 5.13+,
    if the container's seccomp profile lets it through) nothing outside the box can be created,
    written, renamed or removed. Returns the Landlock ABI used, or 0 where there is none (then the
    grader's cleanup of the child's files and the denied chmod/umask are what holds)."""
    ctypes = libc.ctypes
    syscall = libc.lib.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(ctypes.c_long(_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return 0
    handled = _LANDLOCK_WRITES | (_LANDLOCK_REFER if abi >= 2 else 0) | (_LANDLOCK_TRUNCATE if abi >= 3 else 0)
    attr = ctypes.c_uint64(handled)  # struct landlock_ruleset_attr, ABI 1 layout
    ruleset = syscall(ctypes.c_long(_LANDLOCK_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path, allowed in ((box, handled), ("/dev/null", 0x2 | (_LANDLOCK_TRUNCATE if abi >= 3 else 0))):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = ctypes.create_string_buffer(allowed.to_bytes(8, "little") + fd.to_bytes(4, "little", signed=True), 12)
                if syscall(ctypes.c_long(_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if syscall(ctypes.c_long(_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi
