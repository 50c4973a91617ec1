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

    # run_tool_loop's model, tools and exchange: the model is a pure function of the request it gets.
    planned = {"поиск": ("archival_memory_search", '{"query": "телефон"}'),
               "запись": ("core_memory_append", '{"label": "клиент", "text": "Телефон: +7 912 345-67-89"}'),
               "статистика": ("memory_stats", "{}")}
    answers = {"archival_memory_search": "найдено: телефон +7 912 345-67-89",
               "core_memory_append": "записано в блок «клиент»", "memory_stats": "записей в архиве: 3"}

    def plan_of(messages):
        # The customer's message (the request's first) holds the plan: «план: поиск, запись+статистика, ответ».
        if type(messages) is not type([]):
            raise TypeError(f"ask_model принимает список сообщений, а получил {type(messages).__name__}")
        first = messages[0] if len(messages) else None
        text = first.get("content") if type(first) is type({}) else None
        if type(text) is not str or first.get("role") != "user" or not text.startswith("план:"):
            raise ValueError("первым в запросе нет сообщения клиента: модель должна видеть весь ход с его начала")
        return [step.strip() for step in text[len("план:"):].split(",")]

    def planned_reply(plan, number):
        # The reply of the plan's step `number` (1 = the first request); the last step repeats.
        step = plan[number - 1] if number <= len(plan) else plan[len(plan) - 1]
        done = f"Ответ после обменов: {number - 1}"
        if step == "ответ":
            return {"role": "assistant", "content": done}
        if step == "пустые вызовы":
            return {"role": "assistant", "content": done, "tool_calls": []}
        if step == "пусто":
            return {"role": "assistant", "content": None}
        if step == "пробелы":
            return {"role": "assistant", "content": "  "}
        if step == "строка":
            return done  # the text alone, not a message
        content, wire = "", []
        for word in step.split("+"):
            if word == "текст":
                content = "Сейчас проверю."
            elif word in planned:
                tool, arguments = planned[word]
                wire.append({"id": f"call_{number}_{len(wire) + 1}", "type": "function",
                             "function": {"name": tool, "arguments": arguments}})
            else:
                raise ValueError(f"неизвестный шаг плана: {word}")
        return {"role": "assistant", "content": content, "tool_calls": wire}

    def lost(message, number, expected):
        # What stands where exchange `number`'s calling message should: named in the lesson's terms.
        role = message.get("role") if type(message) is type({}) else None
        if not expected.get("tool_calls"):
            return (f"обмен №{number}: здесь модель ответила без вызовов (tool_calls пуст или его нет), "
                    "а ход продолжился — этот ответ и был концом хода")
        if role == "tool":
            return (f"обмен №{number}: результат (tool) стоит раньше сообщения ассистента с вызовами — "
                    "провайдер отклонил бы такой запрос (HTTP 400)")
        if role == "assistant" and message.get("tool_calls"):
            return (f"в запросе нет обмена №{number}: на его месте вызовы другого круга — "
                    "ранние обмены хода потеряны")
        return f"обмен №{number}: ожидалось сообщение ассистента с вызовами, а стоит сообщение с ролью {role}"

    awaited = [0]  # tool_model: the exchange count its next request must reach (its last reply called tools)

    def tool_model(messages):
        plan = plan_of(messages)
        at, number = 1, 1
        while at < len(messages) and type(messages[at]) is type({}) and messages[at].get("role") == "user":
            at += 1  # the customer may have written more than one message
        while at < len(messages):
            expected = planned_reply(plan, number)
            calling = messages[at]
            if not expected.get("tool_calls") or calling != expected:
                raise ValueError(lost(calling, number, expected))
            at += 1
            for call in expected["tool_calls"]:
                result = messages[at] if at < len(messages) else None
                if (type(result) is not type({}) or result.get("role") != "tool"
                        or result.get("tool_call_id") != call["id"]):
                    raise ValueError(f"обмен №{number}: после сообщения с вызовами нет результата вызова {call['id']}")
                at += 1
            number += 1
        if number < awaited[0]:  # the calls this model made last time have no exchange in the request
            raise ValueError(f"в запросе нет обмена №{awaited[0] - 1}: модель вызвала инструменты, а её вызовы и их "
                             "результаты не дошли до следующего запроса — она видит ход без них")
        reply = planned_reply(plan, number)
        awaited[0] = number + 1 if type(reply) is type({}) and reply.get("tool_calls") else 0
        return reply

    def tool_runner(tool_calls):
        if type(tool_calls) is not type([]):
            raise TypeError(f"run_calls принимает список вызовов (tool_calls), а получил {type(tool_calls).__name__}")
        results = []
        for call in tool_calls:
            function = call.get("function") if type(call) is type({}) else None
            if type(function) is not type({}):
                raise TypeError("run_calls: каждый вызов — словарь с id и function")
            calls[0] += 1  # numbered per case: a call run twice shows
            answer = answers.get(function.get("name"), "нет такого инструмента")
            results.append({"role": "tool", "tool_call_id": call.get("id"), "content": f"вызов {calls[0]}: {answer}"})
        return results

    def exchange(pending, calling, results):
        if type(pending) is not type([]) or type(calling) is not type({}) or type(results) is not type([]):
            raise TypeError("add_exchange(pending, calling, results): ход — список, сообщение с вызовами — "
                            "словарь, результаты — список")
        return [*pending, calling, *results]

    fakes = {"chars": chars, "words": words, "echo": echo, "padded": padded,
             "forbidden": forbidden, "blank": blank, "not_str": not_str,
             "new_id": new_id, "padded_new_id": padded_new_id, "no_new_id": no_new_id,
             "blank_new_id": blank_new_id, "int_new_id": int_new_id,
             "tool_model": tool_model, "tool_runner": tool_runner, "exchange": exchange}
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
