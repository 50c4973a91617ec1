"""A seccomp filter for the child: one process, no kernel-global state, fds 3 and 4 kept.

Denied (EPERM unless noted), on x86_64 and aarch64:
* new processes: fork, vfork, clone without CLONE_THREAD (threads stay allowed), clone3 (ENOSYS, so
  libc falls back to clone, whose flags can be checked). One process means the rlimits on memory
  (RLIMIT_AS) and CPU time cover the child as a whole, threads included;
* kernel keyrings (add_key, request_key, keyctl): keys would outlive the child;
* global counters and shared-state channels between children: sysinfo, syslog, flock,
  inotify/fanotify;
* namespaces, mounts, tracing, BPF, perf, io_uring, userfaultfd, modules, clocks, reboot, swap,
  accounting, file handles, quotas;
* replacing or closing the result and frame fds (dup2/dup3 onto 3 or 4, close(3|4), close_range over
  them), so the harness's frames cannot be intercepted.
With `deny_network` (the "uid" tier, which has no network namespace): socket() too, so the child
cannot open any socket (inet, unix, netlink, packet); and, since that tier also shares the IPC
namespace and the file system with every later child: SysV shared memory, semaphores and message
queues, POSIX message queues, mknod, and every way to widen a file's permissions (chmod family,
umask, setting extended attributes such as ACLs), so what the child creates stays 0600 (umask 077).
Other architectures get no filter (`build` returns None) and the namespaced tiers refuse to start.
"""

import struct

CLONE_THREAD = 0x00010000
PROTECTED_FDS = (3, 4)

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_EPERM, _ENOSYS = 1, 38

_LD_ABS_W, _JEQ, _JGE, _JGT, _JSET, _RET = 0x20, 0x15, 0x35, 0x25, 0x45, 0x06
_NR, _ARCH = 0, 4


def _arg(index):
    return 16 + 8 * index  # low 32 bits of args[index] (little-endian); fds and flags fit


_DENY_COMMON = (
    "add_key request_key keyctl sysinfo syslog flock inotify_init1 inotify_add_watch "
    "fanotify_init fanotify_mark unshare setns mount umount2 pivot_root chroot open_tree "
    "move_mount fsopen fsconfig fsmount fspick mount_setattr ptrace process_vm_readv "
    "process_vm_writev kcmp pidfd_getfd bpf perf_event_open userfaultfd io_uring_setup "
    "io_uring_enter io_uring_register kexec_load kexec_file_load init_module finit_module "
    "delete_module reboot swapon swapoff acct settimeofday clock_settime clock_adjtime "
    "adjtimex sethostname setdomainname name_to_handle_at open_by_handle_at quotactl"
).split()

# The "uid" tier: no network, no IPC or file state another child could read later.
_DENY_SHARED = (
    "socket shmget shmat shmctl shmdt semget semop semctl semtimedop msgget msgsnd msgrcv msgctl "
    "mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr chmod fchmod fchmodat "
    "fchmodat2 umask setxattr lsetxattr fsetxattr setxattrat mknod mknodat"
).split()

ARCHES = {
    "x86_64": {
        "audit_arch": 0xC000003E,
        "x32_bit": 0x40000000,
        "extra_deny": ("fork", "vfork", "inotify_init"),
        "numbers": {
            "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "dup2": 33, "dup3": 292,
            "close": 3, "close_range": 436, "add_key": 248, "request_key": 249, "keyctl": 250,
            "sysinfo": 99, "syslog": 103, "flock": 73, "inotify_init": 253,
            "inotify_init1": 294, "inotify_add_watch": 254, "fanotify_init": 300,
            "fanotify_mark": 301, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
            "pivot_root": 155, "chroot": 161, "open_tree": 428, "move_mount": 429, "fsopen": 430,
            "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "ptrace": 101,
            "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438,
            "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425,
            "io_uring_enter": 426, "io_uring_register": 427, "kexec_load": 246,
            "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
            "delete_module": 176, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
            "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159,
            "sethostname": 170, "setdomainname": 171, "name_to_handle_at": 303,
            "open_by_handle_at": 304, "quotactl": 179, "socket": 41,
            "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65,
            "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
            "msgctl": 71, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
            "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "chmod": 90,
            "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "umask": 95, "setxattr": 188,
            "lsetxattr": 189, "fsetxattr": 190, "setxattrat": 463, "mknod": 133, "mknodat": 259,
        },
    },
    "aarch64": {
        "audit_arch": 0xC00000B7,
        "x32_bit": None,
        "extra_deny": (),
        "numbers": {
            "clone": 220, "clone3": 435, "dup3": 24, "close": 57, "close_range": 436,
            "add_key": 217, "request_key": 218, "keyctl": 219, "sysinfo": 179, "syslog": 116,
            "flock": 32, "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262,
            "fanotify_mark": 263, "unshare": 97, "setns": 268, "mount": 40, "umount2": 39,
            "pivot_root": 41, "chroot": 51, "open_tree": 428, "move_mount": 429, "fsopen": 430,
            "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "ptrace": 117,
            "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "pidfd_getfd": 438,
            "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425,
            "io_uring_enter": 426, "io_uring_register": 427, "kexec_load": 104,
            "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
            "delete_module": 106, "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89,
            "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171,
            "sethostname": 161, "setdomainname": 162, "name_to_handle_at": 264,
            "open_by_handle_at": 265, "quotactl": 60, "socket": 198,
            "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "semget": 190,
            "semctl": 191, "semtimedop": 192, "semop": 193, "msgget": 186, "msgctl": 187,
            "msgrcv": 188, "msgsnd": 189, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182,
            "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "fchmod": 52,
            "fchmodat": 53, "fchmodat2": 452, "umask": 166, "setxattr": 5, "lsetxattr": 6,
            "fsetxattr": 7, "setxattrat": 463, "mknodat": 33,
        },
    },
}  # fmt: skip


class _Program:
    """Classic BPF with forward jumps to labels, resolved at the end."""

    def __init__(self):
        self.code = []  # [opcode, jt, jf, k] with jt/jf as labels or ints
        self.labels = {}

    def load(self, offset):
        self.code.append([_LD_ABS_W, 0, 0, offset])

    def jump(self, op, k, yes, no):
        self.code.append([op, yes, no, k])

    def ret(self, value, label=None):
        if label is not None:
            self.labels[label] = len(self.code)
        self.code.append([_RET, 0, 0, value])

    def mark(self, label):
        self.labels[label] = len(self.code)

    def assemble(self):
        out = []
        for position, (op, yes, no, k) in enumerate(self.code):
            offsets = []
            for target in (yes, no):
                distance = self.labels[target] - position - 1 if type(target) is str else target
                if not 0 <= distance <= 255:
                    raise ValueError("BPF jump out of range")
                offsets.append(distance)
            out.append(struct.pack("<HBBI", op, offsets[0], offsets[1], k))
        return b"".join(out)


def build(machine, deny_network=False):
    """The filter's bytes (struct sock_filter[]) for this machine, or None if unsupported."""
    arch = ARCHES.get(machine)
    if arch is None:
        return None
    nr = arch["numbers"]
    p = _Program()
    p.load(_ARCH)
    p.jump(_JEQ, arch["audit_arch"], 0, "kill")
    p.load(_NR)
    if arch["x32_bit"]:
        p.jump(_JGE, arch["x32_bit"], "eperm", 0)
    shared = [name for name in _DENY_SHARED if name in nr] if deny_network else []
    for name in (*_DENY_COMMON, *arch["extra_deny"], *shared):
        p.jump(_JEQ, nr[name], "eperm", 0)
    p.jump(_JEQ, nr["clone3"], "enosys", 0)
    p.jump(_JEQ, nr["clone"], "clone", 0)
    for name in ("dup2", "dup3"):
        if name in nr:
            p.jump(_JEQ, nr[name], "dup", 0)
    p.jump(_JEQ, nr["close"], "close", 0)
    p.jump(_JEQ, nr["close_range"], "close_range", 0)
    p.ret(_RET_ALLOW)
    p.mark("clone")
    p.load(_arg(0))
    p.jump(_JSET, CLONE_THREAD, "allow", "eperm")
    p.mark("dup")
    p.load(_arg(1))
    _deny_protected(p)
    p.mark("close")
    p.load(_arg(0))
    _deny_protected(p)
    p.mark("close_range")  # close_range(first, last): deny when first <= 4 and last >= 3
    p.load(_arg(0))
    p.jump(_JGT, max(PROTECTED_FDS), "allow", 0)
    p.load(_arg(1))
    p.jump(_JGE, min(PROTECTED_FDS), "eperm", "allow")
    p.ret(_RET_ALLOW, "allow")
    p.ret(_RET_ERRNO | _EPERM, "eperm")
    p.ret(_RET_ERRNO | _ENOSYS, "enosys")
    p.ret(_RET_KILL_PROCESS, "kill")
    return p.assemble()


def _deny_protected(p):
    for fd in PROTECTED_FDS:
        p.jump(_JEQ, fd, "eperm", 0)
    p.ret(_RET_ALLOW)


def install(filter_bytes):
    """Install the filter on this thread and every thread or exec it starts (needs no_new_privs)."""
    import ctypes

    count = len(filter_bytes) // 8
    buffer = ctypes.create_string_buffer(filter_bytes, len(filter_bytes))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = Program(count, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    ulong = ctypes.c_ulong
    result = libc.prctl(
        PR_SET_SECCOMP, ulong(SECCOMP_MODE_FILTER), ctypes.byref(program), ulong(0), ulong(0)
    )
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, "seccomp filter refused")
