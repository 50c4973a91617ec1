"""Stage 6 of the child: import the student's file, run each batch of cases, report plain data.

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
        path = f"{self.config['box']}/{self.config['module']}.py"
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

    def import_student(self):
        """Compile and execute the student's file; return the entry or send import_error."""
        config = self.config
        name = config["module"]
        path = f"{config['box']}/{name}.py"
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

    def serve(self):
        entry = self.import_student()
        if entry is None:
            _exit(0)
        self.take_output()
        self.send({"type": "ready"})
        run = self.run_class_case if self.config["kind"] == "class" else self.run_function_case
        while True:
            frame = self.recv()
            if frame is None or frame.get("type") == "end":
                _exit(0)
            for case in frame["cases"]:
                report = run(entry, case)
                text, total = self.take_output()
                self.send({"type": "case", "i": case["i"], "out": text, "out_total": total, **report})
            self.send({"type": "batch_done"})


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
