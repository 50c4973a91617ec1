"""Keep the student's code away from the harness that checks it (same interpreter, other thread).

`install(harness_thread)` is called once, just before the student's module is imported. From then on:

* `sys.modules["__main__"]` is a blank module: the harness is in no module the student can import or
  find (its modules were executed from code objects and never registered);
* an audit hook, which Python offers no way to remove, refuses what would reach objects other than
  the student's own: the garbage collector's object lists, other threads' frames, tracing and
  profiling, new audit hooks, building code objects by hand or unmarshalling them (bytecode that
  reads memory), ctypes, subinterpreters and replacing a function's `__code__`; and on the harness's
  own thread (where finalizers of student objects may run) any frame access at all;
* imported modules are compiled from their sources (no bytecode cache), so no import needs
  `marshal.loads`, which is allowed only for the frames the harness announces with `permit()`.

The student's calls run on threads of their own whose bottom frame is a trampoline with an empty
namespace (see `isolated`), so walking up their frames ends there. What this cannot stop is a
memory-safety bug in CPython itself, or a finalizer of the student's that the garbage collector
happens to run on the harness's thread resuming a generator whose frame it kept (that frame's
f_back is then a harness frame). See the README's known limits.
"""

import _thread
import sys

_ALWAYS = frozenset(
    {
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys.monitoring.register_callback",
        "code.__new__",
        "cpython.PyInterpreterState_New",
    }
)
_ON_HARNESS_THREAD = frozenset({"sys._getframe", "sys._getframemodulename", "object.__getattr__"})


def install(harness_thread):
    """Return permit(data): let the harness unmarshal exactly these bytes, once."""
    get_ident = _thread.get_ident
    allowed = [None]
    refuse = RuntimeError

    def hook(event, args):
        if event in _ALWAYS or event[:7] == "ctypes.":
            raise refuse(f"{event}: запрещено при проверке")
        if event == "marshal.loads":
            # The hook sees a copy of the buffer: compare contents (only the announced frame).
            if allowed[0] is not None and args and args[0] == allowed[0]:
                allowed[0] = None
                return
            raise refuse("marshal.loads: запрещено при проверке")
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            raise refuse("замена __code__: запрещено при проверке")
        if event in _ON_HARNESS_THREAD and get_ident() == harness_thread:
            raise refuse(f"{event}: запрещено при проверке")

    def permit(data):
        allowed[0] = data

    # Stdlib modules the student imports are compiled from source: no .pyc, no marshal.loads.
    sys.implementation.cache_tag = None
    for name in ("ctypes", "ctypes._endian", "_ctypes"):
        sys.modules.pop(name, None)  # a fresh `import ctypes` then meets the hook
    sys.modules["__main__"] = type(sys)("__main__")
    sys.addaudithook(hook)
    return permit
