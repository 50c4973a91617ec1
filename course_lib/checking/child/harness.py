"""Stage 6 of the child: import the student's files, run each batch of cases, report plain data.

Frames from the grader: {"type": "import", "module"} (answered "ready" or "import_error"), then
{"type": "cases", "module", "cases"} for an imported module (one "case" frame each, then
"batch_done" saying whether shared state `changed`), and "end".

The harness runs on the process's main thread and never calls into student code there: the import
and every call happen on a fresh thread started at `isolated`'s trampoline, and this thread waits
for it. Every object that comes back (return values, arguments, exceptions) is kept alive until the
child exits, so no finalizer of the student's runs here because the harness dropped a reference.
Expected results never come here: only inputs. What each case reports:
  {"outcome": {"kind": "return", "value": tagged} | {"kind": "raise", "exc": {"is", "name", "message"}},
   "args_after": [tagged | None], "result_is_arg": index | None}          (function exercises)
  {"init": outcome, "steps": [outcome | {"kind": "tampered"}]}           (class exercises)
"""

import _thread
import builtins
import os
import sys

_type = type
_len = len
_list = list
_tuple = tuple
_dict = dict
_enumerate = enumerate
_zip = zip
_callable = callable
_compile = compile
_exec = exec
_BaseException = BaseException
_SyntaxError = SyntaxError
_str = str
_int = int
_start_thread = _thread.start_new_thread
_new_lock = _thread.allocate_lock
_exit = os._exit


class Harness:
    def __init__(self, config, send, recv, values, tools):
        self.config = config
        self.send = send
        self.recv = recv
        self.values = values
        self.trampoline, capped_text, self.fake, self.method_caller = tools
        self.capture = capped_text(config["output_chars"])
        self.kept = []  # everything the student's code handed back, alive until exit
        self.describe = values.exception_reporter([])
        self.specs = {spec["module"]: spec for spec in config["exercises"]}
        self.loaded = {}  # module -> (entry, exception reporter)
        self.current = None  # the spec whose code runs now (for tracebacks' line numbers)
        self.baseline = None  # built by serve(), once sys.stdout is the capture

    # --- calling student code on its own thread ---------------------------------------------

    def call(self, function, args):
        """(returned, exception, message, finished) of function(*args), run on a fresh thread."""
        box = [None, None, None, False, None]
        done = _new_lock()
        done.acquire()
        _start_thread(self.trampoline, (function, args, box, done))
        done.acquire()
        self.kept.append(box)
        return box

    def outcome(self, box):
        if not box[3] and box[1] is None:
            # The student's code released the lock without finishing: report nothing usable.
            return {"kind": "raise", "exc": {"is": None, "name": "?", "message": ""}}
        if box[1] is not None:
            exc = self.describe(box[1], box[2])
            line = self.student_line(box[4])
            if line is not None:
                exc["line"] = line
            return {"kind": "raise", "exc": exc}
        return {"kind": "return", "value": self.values.encode(box[0])}

    def student_line(self, frames):
        """The last line of the student's file in the traceback the trampoline recorded (plain
        data only: the tuples may come from a faked __traceback__, so every type is checked)."""
        if self.current is None:
            return None
        path = f"{self.config['box']}/{self.current['module']}.py"
        found = None
        if _type(frames) is not _list:
            return None
        for item in frames:
            if _type(item) is _tuple and _len(item) == 2:
                filename, line = item
                if _type(filename) is _str and _type(line) is _int and filename == path:
                    found = line
        return found

    def take_output(self):
        capture = self.capture
        parts = capture.parts if _type(capture.parts) is _list else []
        text = "".join([part for part in parts if _type(part) is _str])
        total = capture.total if _type(capture.total) is _int else 0
        capture.parts, capture.kept, capture.total = [], 0, 0
        return text, total

    # --- inputs ---------------------------------------------------------------------------

    def materialize(self, value):
        """JSON input -> fresh Python objects; {"$fake": name} becomes a deterministic callable."""
        kind = _type(value)
        if kind is _dict:
            if _len(value) == 1 and "$fake" in value:
                return self.fake(value["$fake"])
            return {key: self.materialize(item) for key, item in value.items()}
        if kind is _list:
            return [self.materialize(item) for item in value]
        return value

    # --- the two kinds of exercises ---------------------------------------------------------

    def run_function_case(self, entry, case):
        raw_args = case["args"]
        args = [self.materialize(item) for item in raw_args]
        self.kept.append(args)
        box = self.call(entry, args)
        outcome = self.outcome(box)
        result_is_arg = None
        returned = box[0]
        if _type(returned) is _list or _type(returned) is _dict:
            for index, arg in _enumerate(args):
                if returned is arg:
                    result_is_arg = index
                    break
        after = [
            None if _is_fake(raw) else self.values.encode(arg) for raw, arg in _zip(raw_args, args)
        ]
        return {"outcome": outcome, "args_after": after, "result_is_arg": result_is_arg}

    def run_class_case(self, entry, case):
        init_args = [self.materialize(item) for item in case.get("init", [])]
        self.kept.append(init_args)
        box = self.call(entry, init_args)
        init = self.outcome(box)
        if init["kind"] != "return":
            return {"init": init, "steps": []}
        instance = box[0]
        returned = []
        steps = []
        for step in case["steps"]:
            if "tamper" in step:
                _tamper(returned[step["tamper"]])
                steps.append({"kind": "tampered"})
                returned.append(None)
                continue
            args = [self.materialize(item) for item in step.get("args", [])]
            self.kept.append(args)
            box = self.call(self.method_caller, (instance, step["call"], args))
            steps.append(self.outcome(box))
            returned.append(box[0])
        return {"init": init, "steps": steps}

    # --- import and the batch loop ----------------------------------------------------------

    def import_student(self, config):
        """Compile and execute one student file; return the entry or send import_error."""
        self.current = config
        self.describe = self.values.exception_reporter([])
        name = config["module"]
        path = f"{self.config['box']}/{name}.py"
        try:
            code = _compile(config["source"], path, "exec", dont_inherit=True)
        except _BaseException as error:  # SyntaxError, ValueError (NUL bytes), MemoryError, ...
            detail = self.describe(error, None)
            detail["message"] = ""
            line = None
            if isinstance(error, _SyntaxError):  # compile()'s own error: no student code yet
                line = error.lineno
                detail["message"] = error.msg if _type(error.msg) is _str else ""
            detail["line"] = line if _type(line) is _int else None
            self.send({"type": "import_error", "kind": "syntax", **detail})
            return None
        module = type(sys)(name)
        module.__file__ = path
        sys.modules[name] = module
        namespace = module.__dict__
        namespace["__builtins__"] = builtins  # exec() would give it the trampoline's few names
        box = self.call(_exec, (code, namespace))
        if box[1] is not None or not box[3]:
            self.send({"type": "import_error", "kind": "exception", **self.outcome(box)["exc"]})
            return None
        self.namespace = namespace
        # Captured now: rebinding these names later changes nothing.
        entry = _dict.get(namespace, config["entry"])
        custom = [
            (name, self.values.class_or_none(_dict.get(namespace, name)), base)
            for name, base in config["custom_exceptions"]
        ]
        self.describe = self.values.exception_reporter(custom)
        if config["kind"] == "class":
            wrong = self.values.class_or_none(entry) is None
        else:
            wrong = entry is None or not _callable(entry)
        if wrong:
            self.send({"type": "import_error", "kind": "missing", "message": ""})
            return None
        return entry

    def load(self, module):
        """Import `module` once and answer "ready" (or "import_error"); False when it failed."""
        if module not in self.loaded:
            entry = self.import_student(self.specs[module])
            if entry is None:
                return False
            self.loaded[module] = (entry, self.describe)
            self.baseline.adopt(self.namespace, module)
        self.take_output()  # what the import printed is nobody's case output
        self.send({"type": "ready"})
        return True

    def serve(self):
        baseline = self.baseline = Baseline(self.specs)
        while True:
            frame = self.recv()
            if frame is None or frame.get("type") == "end":
                _exit(0)
            if frame["type"] == "import":
                self.load(frame["module"])
                continue
            module = frame["module"]
            spec = self.specs[module]
            entry, self.describe = self.loaded[module]
            self.current = spec
            run = self.run_class_case if spec["kind"] == "class" else self.run_function_case
            for case in frame["cases"]:
                report = run(entry, case)
                text, total = self.take_output()
                self.send({"type": "case", "i": case["i"], "out": text, "out_total": total, **report})
            self.send({"type": "batch_done", "changed": baseline.changed()})


_sys_modules = sys.modules


class Baseline:
    """What every exercise of this child relies on staying as it was: builtins and the modules
    loaded so far. `changed()` is True once a student file has rebound a name in one of them, or
    put its own function or class into a module it imported: the grader then starts the next
    exercise in a fresh child, so such a file costs no other exercise a point. A module that a
    student file imports joins the baseline once that import is over (`adopt`), unless it already
    holds the file's own objects. Objects are kept alive, so no id can be reused."""

    def __init__(self, exercise_modules):
        self.allowed = set(exercise_modules)
        self.modules = {}
        self.watched = []
        self.tainted = False
        for name, module in _list(_sys_modules.items()):
            self.watch(name, module)

    def watch(self, name, module):
        self.modules[name] = module
        namespace = getattr(module, "__dict__", None)
        if _type(namespace) is _dict:
            # Names the module adds later (a package gets its submodules, lazy caches) are no
            # change; a name rebound or removed is.
            self.watched.append((namespace, _list(namespace.items())))

    def adopt(self, student_namespace, student_module):
        """After a student file's import: watch the modules it brought in, if they are clean."""
        for name, module in _list(_sys_modules.items()):
            if name in self.modules or name in self.allowed:
                continue
            namespace = getattr(module, "__dict__", None)
            if _type(namespace) is _dict and _holds_own(namespace, student_namespace, student_module):
                self.tainted = True
            self.watch(name, module)

    def changed(self):
        if self.tainted:
            return True
        for name in _list(_sys_modules):
            if name not in self.modules and name not in self.allowed:
                return True  # imported during a call, never looked at
        for name, module in self.modules.items():
            if _sys_modules.get(name) is not module:
                return True
        get, missing = _dict.get, self
        for namespace, items in self.watched:
            for key, value in items:
                if get(namespace, key, missing) is not value:
                    return True
        return False


def _holds_own(namespace, student_namespace, student_module):
    """Whether a module's names (or its classes' attributes) hold the student file's functions or classes."""
    for value in _list(namespace.values()):
        if _owned(value, student_namespace, student_module):
            return True
        if _type(value) is type:
            for item in _list(_class_dict(value).values()):
                if _owned(item, student_namespace, student_module):
                    return True
    return False


def _owned(value, student_namespace, student_module):
    kind = _type(value)
    if kind is _function_type:
        return _globals_of(value) is student_namespace
    if kind is type:
        return _class_dict(value).get("__module__") == student_module
    return False


_function_type = _type(lambda: None)
_globals_of = _function_type.__dict__["__globals__"].__get__
_class_dict = type.__dict__["__dict__"].__get__  # a mappingproxy: read-only, C methods


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
