"""Objects the student's code can touch, built in namespaces that hold nothing of the harness.

Functions defined in a module keep that module's globals (`f.__globals__`, a frame's `f_globals`),
so everything the student's code can reach — the thread trampoline at the bottom of its stack, the
stand-in for sys.stdout, the fake tokenizers and models passed as arguments — is compiled here
into a fresh namespace that holds only the few builtins it names.
"""

import builtins

_TRAMPOLINE = '''
def trampoline(call, args, box, done):
    """Bottom frame of every thread that runs student code: call, keep the outcome, signal."""
    try:
        try:
            box[0] = call(*args)
        except BaseException as error:  # SystemExit and KeyboardInterrupt included
            box[1] = error
            try:
                message = str(error)
            except BaseException:
                message = None
            box[2] = message
            try:  # where it was raised: (file, line) per frame, for "the line in your file"
                frames = []
                tb = error.__traceback__
                while tb is not None and len(frames) < 200:
                    frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
                    tb = tb.tb_next
                box[4] = frames
            except BaseException:
                box[4] = None
        box[3] = True
    finally:
        done.release()
'''

_METHOD_CALLER = '''
def method_caller(instance, name, args):
    """A class exercise's step, on the student's thread: instance.name(*args)."""
    return getattr(instance, name)(*args)
'''

_CAPTURE = '''
class CappedText:
    """Stands in for sys.stdout/sys.stderr: keeps the first `limit` characters, counts the rest."""

    def __init__(self, limit):
        self.limit = limit
        self.parts = []
        self.kept = 0
        self.total = 0
        self.encoding = "utf-8"
        self.errors = "strict"

    def write(self, text):
        if type(text) is not str:
            raise TypeError("write() argument must be str")
        size = len(text)
        self.total += size
        room = self.limit - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)
        return size

    def flush(self):
        return None

    def isatty(self):
        return False

    def writable(self):
        return True
'''

_FAKES = '''
def fake(name):
    """Deterministic stand-ins for injected dependencies (a tokenizer, a summarizing model)."""
    calls = [0]

    def require_str(text, who):
        if type(text) is not str:
            raise TypeError(f"{who} принимает только строку")

    def once(who):
        calls[0] += 1
        if calls[0] > 1:
            raise RuntimeError(f"{who} вызван второй раз, а нужен ровно один вызов")

    def chars(text):
        require_str(text, "count_text")
        return len(text)

    def words(text):
        require_str(text, "count_text")
        return len(text.split())

    def echo(text):
        require_str(text, "summarize")
        once("summarize")
        return text

    def padded(text):
        require_str(text, "summarize")
        once("summarize")
        return f"\\n  Сводка: {len(text.splitlines())} строк(и)  \\n"

    def forbidden(text):
        raise RuntimeError("summarize не должен был вызываться")

    def blank(text):
        once("summarize")
        return "  \\n "

    def not_str(text):
        once("summarize")
        return 42

    def memory_tools():
        # Tools for run_tool_calls: each call is numbered, so a tool run twice or out of order shows.
        def numbered(text):
            calls[0] += 1
            return f"вызов {calls[0]}: {text}"

        def refuse_extra(extra):
            for key in extra:
                raise ValueError(f"лишний аргумент {key}")

        def append(label=None, text=None, **extra):
            refuse_extra(extra)
            if type(label) is not str or type(text) is not str:
                raise ValueError("label и text — обязательные строки")
            return numbered(f"в блок «{label}» дописано: {text}")

        def search(query=None, page=0, **extra):
            refuse_extra(extra)
            if type(query) is not str or type(page) is not type(0):
                raise ValueError("query — строка, page — целое число")
            return numbered(f"по запросу «{query}», страница {page}: ничего не найдено")

        def insert(**arguments):
            raise RuntimeError("архив недоступен, попробуйте позже")

        def stats():
            return numbered("записей в архиве: 3")

        return {"core_memory_append": append, "archival_memory_search": search,
                "archival_memory_insert": insert, "memory_stats": stats}

    def new_id():
        # new_session_id of the console (console_command): a fresh Session ID, asked for once.
        once("new_session_id")
        return "s-2"

    def padded_new_id():
        once("new_session_id")
        return "  s-2\\n"

    def no_new_id():
        raise RuntimeError("new_session_id не должен был вызываться: новый Session ID нужен только для /new")

    def blank_new_id():
        return "   "

    def int_new_id():
        return 42

    fakes = {"chars": chars, "words": words, "echo": echo, "padded": padded,
             "forbidden": forbidden, "blank": blank, "not_str": not_str,
             "new_id": new_id, "padded_new_id": padded_new_id, "no_new_id": no_new_id,
             "blank_new_id": blank_new_id, "int_new_id": int_new_id}
    if name == "memory_tools":
        return memory_tools()
    if name not in fakes:
        raise ValueError(f"unknown fake {name!r}")
    return fakes[name]
'''

_NAMES = (
    "BaseException", "str", "len", "type", "TypeError", "RuntimeError", "ValueError",
    "__build_class__", "getattr",
)  # fmt: skip


def _compile(source, name):
    namespace = {
        "__builtins__": {key: getattr(builtins, key) for key in _NAMES},
        "__name__": "sandbox",
    }
    exec(compile(source, f"<sandbox {name}>", "exec", dont_inherit=True), namespace)
    return namespace[name]


def build():
    """(trampoline, CappedText, fake, method_caller): fresh objects for one child."""
    return (
        _compile(_TRAMPOLINE, "trampoline"),
        _compile(_CAPTURE, "CappedText"),
        _compile(_FAKES, "fake"),
        _compile(_METHOD_CALLER, "method_caller"),
    )
