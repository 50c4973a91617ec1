"""Short errors in notebooks: a course error as a few Russian lines, the traceback one click away.

Without this, a key and no network turn cell 2 of notebook 00 into a 281-line chained traceback
that ends in one Russian sentence. `install()` (called by `notebook_tools.setup_notebook()`)
registers an IPython custom exception handler: course errors (`LLM…Error`, `ChatServiceError`,
settings errors, any exception defined in course_lib) show what failed, the likely cause and the
next step; a `NameError` gets the hint to run the cells above (after a kernel restart the
variables are gone). The full traceback stays in a collapsed <details>. Anything else gets
IPython's usual traceback.

After the first course error of a kernel (a model that did not answer, a reply cut at the length
limit), the cells below often fail too: a variable that cell should have made is missing, a check
has nothing to count. Such a later error that is not the course's own (`NameError`, `ValueError`,
`AssertionError`, …) is explained as a consequence: it names the cell where the notebook first
stopped and what to fix there, instead of a second, unrelated-looking traceback. A kernel restart
forgets the first error with everything else.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from course_lib.llm import trouble

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

OFFLINE_STEP = ("Продолжить без модели: выполните в новой ячейке %env LLM_BACKEND=offline и запустите "
                "ячейки сверху заново (Run → Run All Above Selected Cell); насовсем — «Офлайн-модель» "
                "в панели настроек ноутбука 00.")
CHECK_STEP = ("Проверить подключение: панель настроек в ноутбуке 00 («Проверить») или в терминале "
              "python -m course_lib doctor --check.")
RESTART_STEP = "После правки настроек перезапустите ядро (Kernel → Restart Kernel)."
RUN_ABOVE = "Run → Run All Above Selected Cell"
RUN_ALL = "Run → Run All Cells"


@dataclass(frozen=True)
class FirstStop:
    """The first course error this kernel showed: later failures are explained by it."""

    cell: int | None  # the cell's execution count, as Jupyter shows it: [N]
    title: str
    shown: bool = True  # False: a cell caught it, the student has not seen the course's message
    details: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()


_first_stop: FirstStop | None = None


@dataclass(frozen=True)
class ShortError:
    title: str
    details: tuple[str, ...]
    steps: tuple[str, ...]

    def lines(self) -> list[str]:
        return [f"✘ {self.title}", *self.details, *(f"→ {step}" for step in self.steps)]


def _chain(error: BaseException) -> list[BaseException]:
    """The error and its causes/contexts, outermost first (cycles cut)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not item for item in seen) and len(seen) < 20:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _is_course_error(error: BaseException) -> bool:
    return type(error).__module__.split(".")[0] == "course_lib"


def _message(error: BaseException) -> str:
    try:
        text = str(error).strip()
    except Exception:  # noqa: BLE001 - a broken __str__ must not break the handler
        text = ""
    return text or type(error).__name__


def _model_target() -> str:
    """Which model the settings name, for the cause line (never the key)."""
    try:
        from course_lib.config import load_settings

        settings = load_settings()
    except Exception:  # noqa: BLE001
        return "сервер модели"
    return f"сервер {settings.openai_base_url or 'api.openai.com'} (модель {settings.model})"


def _llm_cause(error: BaseException) -> str:
    from course_lib.llm import errors

    target = _model_target()
    if isinstance(error, errors.LLMTimeoutError):
        return f"Вероятная причина: {target} отвечает слишком долго или сеть недоступна."
    if isinstance(error, errors.LLMConnectionError):
        return (f"Вероятная причина: {target} недоступен — нет сети, неверный OPENAI_BASE_URL "
                "или локальный сервер (Ollama, LM Studio, llama.cpp) не запущен.")
    if isinstance(error, errors.LLMAuthenticationError):
        return "Вероятная причина: ключ OPENAI_API_KEY неверный, отозван или от другого провайдера."
    if isinstance(error, errors.LLMRateLimitError):
        return "Вероятная причина: исчерпаны лимит запросов или баланс у провайдера."
    if isinstance(error, errors.LLMBadRequestError):
        return ("Вероятная причина: сервер не знает модель из OPENAI_MODEL или не принимает роль "
                "инструкции (LLM_INSTRUCTION_ROLE=system для локальных серверов).")
    if isinstance(error, errors.LLMServerError):
        return f"Вероятная причина: сбой на стороне провайдера ({target}); повторите позже."
    return f"Вероятная причина: {target} не дал ответа."


def describe(error: BaseException) -> ShortError | None:
    """The short form of a course error or a NameError; None for anything else."""
    chain = _chain(error)
    if isinstance(error, NameError) and not _is_course_error(error):
        name = getattr(error, "name", None)
        what = f"Имя {name} не определено." if name else _message(error)
        return ShortError(
            f"NameError: {what}",
            ("Так бывает после перезапуска ядра или когда ячейки выше ещё не выполнены: "
             "переменные живут в ядре, а не в ноутбуке.",),
            (f"Выполните ячейки выше ({RUN_ABOVE}), затем эту ещё раз.",),
        )
    from course_lib.llm.errors import LLMClientError

    llm = next((item for item in chain if isinstance(item, LLMClientError)), None)
    settings_error = next((item for item in chain if _is_settings_error(item)), None)
    if settings_error is not None:
        return ShortError(
            "Настройки не прочитаны: в .env или в переменных окружения неверное значение.",
            tuple(_message(settings_error).splitlines()[:6]),
            ("Исправьте значение: панель настроек в ноутбуке 00 (или строку в .env).", RESTART_STEP,
             *((OFFLINE_STEP,) if re.search(r"LLM_BACKEND|OPENAI_", _message(settings_error)) else ())),
        )
    if llm is not None:
        outer = error if error is not llm else None
        title = ("Ход чата не выполнен: модель не ответила, сессия не изменилась."
                 if outer is not None and type(outer).__name__ == "ChatServiceError"
                 else "Запрос к модели не удался.")
        return ShortError(
            title,
            (f"{type(llm).__name__}: {_message(llm)}", _llm_cause(llm)),
            (CHECK_STEP, OFFLINE_STEP),
        )
    if _is_course_error(error):
        message = _message(error)
        if re.search(r"ограничени\w* длины|finish_reason=length", message):
            # The model did answer, but ran into MAX_OUTPUT_TOKENS: small local models often do.
            return ShortError(
                f"{type(error).__name__}: {message}",
                ("Модель не закончила ответ: упёрлась в предел длины ответа (MAX_OUTPUT_TOKENS). "
                 "Маленькие локальные модели часто не останавливаются сами.",),
                ("Увеличьте MAX_OUTPUT_TOKENS (панель настроек в ноутбуке 00 или .env) или возьмите модель, "
                 "которая заканчивает ответ сама.", RESTART_STEP, OFFLINE_STEP),
            )
        if type(error).__name__ == "MemoryExtractionError":
            return ShortError(
                f"{type(error).__name__}: {message}",
                ("Модель не вернула факты в нужном виде (JSON по схеме). Маленькие локальные модели "
                 "часто не умеют этого; память чата без фактов продолжает работать.",),
                ("Для этого ноутбука возьмите модель покрупнее или офлайн-модель.", OFFLINE_STEP),
            )
        return ShortError(
            f"{type(error).__name__}: {message}",
            (),
            (f"Если ошибка появилась после перезапуска ядра, выполните ячейки выше ({RUN_ABOVE}).",),
        )
    return None


def _is_settings_error(error: BaseException) -> bool:
    from pydantic import ValidationError

    from course_lib.config import SettingsError

    if isinstance(error, SettingsError):
        return True
    if isinstance(error, ValidationError):
        return getattr(error, "title", "") in {"Settings"}
    try:
        from pydantic_settings import SettingsError as PydanticSettingsError
    except ImportError:  # pragma: no cover - pydantic-settings is a course dependency
        return False
    return isinstance(error, PydanticSettingsError)


def render_text(short: ShortError) -> str:
    return "\n".join(short.lines())


def render_html(short: ShortError, traceback_text: str) -> str:
    esc = html.escape
    body = [f'<div style="font-weight:bold;color:#c0392b">{esc(short.lines()[0])}</div>']
    body += [f"<div>{esc(line)}</div>" for line in short.details]
    body += [f'<div style="color:#1a5276">→ {esc(step)}</div>' for step in short.steps]
    details = (
        '<details class="course-error-traceback" style="margin-top:4px">'
        '<summary style="cursor:pointer;color:#555">Полный traceback (нажмите, чтобы раскрыть)</summary>'
        f'<pre style="white-space:pre-wrap;font-size:11px;max-height:30em;overflow:auto">'
        f"{esc(traceback_text)}</pre></details>"
    )
    return (
        '<div class="course-error" style="background:#fdecea;border-left:4px solid #c0392b;'
        f'padding:6px 10px;margin:4px 0;line-height:1.45">{"".join(body)}{details}</div>'
    )


def plain_traceback(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None) -> str:
    try:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        return _ANSI.sub("", shell.InteractiveTB.stb2text(stb))
    except Exception:  # noqa: BLE001
        import traceback

        return "".join(traceback.format_exception(etype, value, tb))


def consequence(error: BaseException, first: FirstStop) -> ShortError:
    """A later error that is not the course's own, explained by the first stop above it."""
    where = f"в ячейке [{first.cell}]" if first.cell is not None else "выше"
    what = _message(error).splitlines()[0][:300]
    title = type(error).__name__ if what == type(error).__name__ else f"{type(error).__name__}: {what}"
    if first.shown:
        return ShortError(
            title,
            (f"Скорее всего, это следствие ошибки {where}: «{first.title.rstrip('.')}». "
             "Эта ячейка опирается на результат, который там не получился.",),
            (f"Устраните причину, названную {where}, и запустите ноутбук заново ({RUN_ALL}).",),
        )
    # The model failed in a cell that caught the error and went on: the student has not seen the
    # cause in the course's form yet, so it comes here in full.
    return ShortError(
        title,
        (f"Скорее всего, это следствие сбоя модели {where}: «{first.title.rstrip('.')}». Та ячейка поймала "
         "ошибку и пошла дальше, а эта опирается на результат, который там не получился.", *first.details),
        (*first.steps, f"Затем запустите ноутбук заново ({RUN_ALL})."),
    )


def remember_first_stop(short: ShortError, error: BaseException, cell: int | None) -> None:
    """Keep the kernel's first course error: a plain NameError is a consequence, never a first stop."""
    global _first_stop
    if _first_stop is None and _chain_has_course_error(error):
        _first_stop = FirstStop(cell, short.title)


def _chain_has_course_error(error: BaseException) -> bool:
    return any(_is_course_error(item) for item in _chain(error))


def forget_first_stop() -> None:
    global _first_stop
    _first_stop = None
    trouble.forget()


def _caught_model_trouble() -> FirstStop | None:
    """The first failure of a real model that a cell caught (course_lib.llm.trouble), as a first stop."""
    note = trouble.first()
    short = describe(note.error) if note is not None else None
    if short is None:
        return None
    return FirstStop(note.cell, short.title.removeprefix("ModelTrouble: "), shown=False,
                     details=short.details, steps=short.steps)


def explain(error: BaseException, cell: int | None = None) -> ShortError | None:
    """describe() plus this kernel's history: a later plain error is shown as a consequence."""
    if not _chain_has_course_error(error):
        first = _first_stop or _caught_model_trouble()
        if first is not None:
            return consequence(error, first)
    short = describe(error)
    if short is not None:
        remember_first_stop(short, error, cell)
    return short


def handler(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> list[str]:
    """IPython's custom exception handler: short form for course errors, usual traceback otherwise."""
    short = explain(value, trouble.running_cell(shell))
    if short is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return []
    from IPython.display import display

    text = render_text(short)
    display({"text/plain": text, "text/html": render_html(short, plain_traceback(shell, etype, value, tb, tb_offset))},
            raw=True)
    return []


def install(shell: Any) -> bool:
    """Register the handler on this IPython shell (again is harmless). False outside IPython.

    Every notebook calls this in its first cell, so Run All starts with no first stop remembered:
    a fixed cause must not colour the errors of a fresh run."""
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    forget_first_stop()
    shell.set_custom_exc((Exception,), handler)
    return True
