"""A Docker-like container for grader tests: root without CAP_SYS_ADMIN, namespaces refused.

`CONTAINER` is a Python script: `python3 container.py landlock|no-landlock COMMAND…` drops
CAP_SYS_ADMIN from the bounding and current sets, installs a seccomp filter that refuses
unshare/setns (EPERM), clone3 (ENOSYS) and clone(CLONE_NEWUSER) (EPERM) — what Docker's default
profile gives — and, with `no-landlock`, the Landlock syscalls too (ENOSYS), as an older profile
does; then it execs COMMAND. x86_64 only.
"""

CONTAINER = r'''
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
CAP_SYS_ADMIN = 21
assert libc.prctl(24, CAP_SYS_ADMIN, 0, 0, 0) == 0  # PR_CAPBSET_DROP
class H(ctypes.Structure): _fields_ = [("v", ctypes.c_uint32), ("pid", ctypes.c_int)]
class D(ctypes.Structure): _fields_ = [("e", ctypes.c_uint32), ("p", ctypes.c_uint32), ("i", ctypes.c_uint32)]
h = H(0x20080522, 0); d = (D * 2)()
assert libc.capget(ctypes.byref(h), ctypes.byref(d)) == 0
for f in ("e", "p", "i"):
    setattr(d[0], f, getattr(d[0], f) & ~(1 << CAP_SYS_ADMIN))
assert libc.capset(ctypes.byref(h), ctypes.byref(d)) == 0
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
no_landlock = sys.argv[1] == "no-landlock"
prog = [(0x20, 0, 0, 4), (0x15, 1, 0, 0xC000003E), (0x06, 0, 0, ALLOW), (0x20, 0, 0, 0),
        (0x15, 0, 1, 272), (0x06, 0, 0, EPERM), (0x15, 0, 1, 308), (0x06, 0, 0, EPERM),
        (0x15, 0, 1, 435), (0x06, 0, 0, ENOSYS)]
if no_landlock:
    prog += [(0x35, 0, 2, 444), (0x35, 1, 0, 447), (0x06, 0, 0, ENOSYS)]
prog += [(0x15, 0, 3, 56), (0x20, 0, 0, 16), (0x45, 0, 1, 0x10000000), (0x06, 0, 0, EPERM),
         (0x06, 0, 0, ALLOW)]
raw = b"".join(struct.pack("<HBBI", *i) for i in prog)
buf = ctypes.create_string_buffer(raw, len(raw))
class P(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("f", ctypes.c_void_p)]
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(P(len(prog), ctypes.addressof(buf))), 0, 0) == 0
os.execvp(sys.argv[2], sys.argv[2:])
'''
