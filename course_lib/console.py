"""`python -m course_lib chat`: the support chat in a terminal, as in the seed's console.

Commands: /new starts a new conversation (new Session ID, the old one is cleared), /exit quits.
End of input (Ctrl-D, or the end of a piped file) also quits cleanly. What to do with each typed
line (send it, a command, an empty line or an unknown command, neither sent to the model) is
decided by notebook 03's exercise `console_command` (`decide`; `--your-code` runs the student's).

`--store [PATH]` keeps sessions in a SQLite file (default `.course-data/sessions.sqlite3` in the
course folder), so `--session ID` continues a conversation in a later process. `--user NAME` turns
long-term memory on for that user (facts from earlier sessions come back; /memory lists them,
/forget erases them from the file). Without `--store` nothing is written to disk.
`--store postgresql://user:password@host:5432/db` keeps both in a PostgreSQL database instead, shared
by every process and machine that uses the same URL (see `store_url`; an unknown scheme is an error).
A session belongs to the user who started it: `--session` of another user's session is refused.
`--memory tools` (with `--user`) runs notebook 09's chat instead: the model manages the user's
memory through tool calls, each printed as one line (`course_lib.tool_memory.console`).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from uuid import uuid4

from course_lib.chat_service import ChatReply, ChatService, ChatServiceError
from course_lib.config import SettingsError, load_settings
from course_lib.console_input import typed_lines
from course_lib.course_versions.console_command import console_command
from course_lib.llm.errors import LLMClientError
from course_lib.memory.context import memory_line
from course_lib.pricing import format_usd
from course_lib.russian import decimal, plural, tokens
from course_lib.your_code import used_line

YES_NO = {True: "да", False: "нет"}
DEFAULT_STORE = Path(__file__).resolve().parent.parent / ".course-data" / "sessions.sqlite3"


def print_reply(result: ChatReply, out: Callable[[str], None] = print, *, with_text: bool = True) -> None:
    if with_text:  # a streamed reply is already on the screen
        out(f"Поддержка: {result.text}")
    code = used_line(getattr(result, "implementations", ()))
    if code is not None:  # chat --your-code: which of the student's functions answered
        out(code)
    out(f"Session ID ответа: {result.session_id}")
    out(f"Сообщений в истории: {result.history_messages}")
    out(f"Сообщений истории в запросе: {result.context_history_messages}")
    out(f"Сообщений истории отброшено: {result.removed_history_messages}")
    out(f"Оценка входных токенов до запроса: {result.estimated_prompt_tokens}")
    if result.token_factor != 1.0:
        corrected = result.estimated_prompt_tokens * result.token_factor
        out(f"С поправкой на токенизатор провайдера (×{decimal(result.token_factor)}): ~{corrected:.0f}")
    if result.calibration is not None:
        out(f"Поправка токенов: {result.calibration.describe()}")
    out(f"Сводка сохранена: {YES_NO[result.has_summary]}")
    out(f"Сводка обновлена на этом ходу: {YES_NO[result.summary_updated]}")
    out(f"Промпт: {result.prompt_id}@{result.prompt_version}")
    if result.summary_error is not None:  # the reply came from the window alone; nothing was lost
        out(f"Сводка не обновлена: {result.summary_error} Ответ дан по последним сообщениям; "
            "ваше сообщение и вся история сохранены.")
    if result.measured_prompt_tokens is not None:
        out(f"Сервер посчитал этот запрос до отправки: {tokens(result.measured_prompt_tokens)}")
    if result.memory_extraction is not None:
        out(result.memory_extraction.describe())
    out(f"Время ответа: {decimal(result.elapsed_seconds)} с"
        + (f" (из них извлечение фактов {decimal(result.memory_extraction.elapsed_seconds)} с)"
           if result.memory_extraction is not None else ""))
    if result.total_tokens is None:
        out("Провайдер не вернул статистику токенов.")
    else:
        out(f"Входные токены: {result.prompt_tokens}")
        if result.cached_tokens:
            out(f"Из них из кэша промпта: {result.cached_tokens}")
        out(f"Выходные токены: {result.completion_tokens}")
        out(f"Всего токенов: {result.total_tokens}")
    out(f"Стоимость хода: {format_usd(result.cost_usd)}" + ("" if result.cost_usd is not None else
        " (нет цены для этой модели; задайте MODEL_PRICES)"))
    if result.first_token_seconds is not None:
        out(f"Первый фрагмент ответа через: {decimal(result.first_token_seconds)} с")
    out(f"ID ответа: {result.response_id}")


def run_console(
    service: ChatService,
    app_env: str,
    configured_model: str,
    backend_label: str,
    read: Callable[[str], str] = input,
    out: Callable[[str], None] = print,
    new_session_id: Callable[[], str] = lambda: uuid4().hex,
    session_id: str | None = None,
    user_id: str | None = None,
    stream: bool = False,
    write: Callable[[str], None] | None = None,
    decide: Callable[[str, str, Callable[[], str]], dict] = console_command,
) -> None:
    """`stream`: print the reply piece by piece with `write` (no newline, flushed) as it arrives.
    `decide(line, session_id, new_session_id)`: what to do with a typed line (notebook 03's exercise
    `console_command`, the course's version by default)."""
    out(f"Окружение: {app_env}")
    out(f"Настроенная модель: {configured_model}")
    out(f"Бэкенд: {backend_label}")
    if session_id is None:
        session_id = new_session_id()
        out(f"Session ID: {session_id}")
    else:
        try:
            stored = service.get_session(session_id, user_id=user_id)  # another user's: refused
        except ChatServiceError as error:
            out(f"Ошибка чата: {error}")
            return
        session_id = stored.session_id
        out(f"Session ID: {session_id} (продолжаем: сообщений в истории {len(stored.messages)}, "
            f"{'сводка есть' if stored.summary else 'сводки нет'})")
    warning = _context_warning(service)
    if warning:
        out(f"Внимание: {warning}")
    memory = service.memory if user_id is not None else None
    if memory is None:
        out("Команды: /new — новый диалог, /exit — выход.")
    else:
        out(f"Пользователь: {user_id}; долговременная память включена.")
        out("Команды: /new — новый диалог, /memory — что помнит чат, /forget — забыть всё, /exit — выход.")

    for user_text in typed_lines(read, out, stop_at_exit=False):
        command = user_text.strip().lower()  # /Memory too: commands do not depend on case
        if memory is not None and command == "/memory":
            facts = memory.facts(user_id)
            out("Память о вас пуста." if not facts else "Чат помнит о вас:")
            for fact in facts:
                out(f"  {memory_line(fact)} (сессия {fact.session_id}, ход {fact.turn})")
            continue
        if memory is not None and command == "/forget":
            try:
                report = service.forget(user_id)
            except ChatServiceError as error:
                out(f"Ошибка чата: {error}")
                continue
            out(f"Память о клиенте {user_id} и его диалоги стёрты из файла или базы "
                f"(записей: {report.records}, диалогов: {report.sessions}).")
            if report.ownerless_left:
                left = plural(report.ownerless_left, ("диалог", "диалога", "диалогов"))
                out(f"В хранилище остались диалоги без владельца — {left} (начаты без --user или "
                    "записаны до появления владельцев у диалогов): ничто не связывает их с этим "
                    "клиентом, они не тронуты.")
            session_id = new_session_id()
            out(f"Новый Session ID: {session_id}")
            continue
        try:
            decision = decide(user_text, session_id, new_session_id)
        except Exception as error:  # noqa: BLE001 — the decision of a student's function; the chat goes on
            out(f"Строка не разобрана ({type(error).__name__}): {error}. "
                "Модели ничего не отправлено; можно продолжать.")
            continue
        if decision["action"] == "exit":
            return
        if decision["action"] == "new":
            try:
                service.reset_session(session_id, user_id=user_id)
            except ChatServiceError as error:
                out(f"Ошибка чата: {error}")
                continue
            session_id = decision["session_id"]
        if decision["notice"] is not None:
            out(decision["notice"])
        if decision["action"] == "unknown" and memory is not None:
            out("Ещё команды: /memory — что помнит чат, /forget — забыть всё.")
        if decision["action"] != "send":  # a command or an empty line: nothing goes to the model
            continue
        shown: list[str] = []
        try:
            result = service.reply(
                session_id, decision["text"], user_id=user_id,
                on_delta=_printer(shown, write or out) if stream else None,
            )
        except (ChatServiceError, LLMClientError) as error:
            if shown:  # part of a reply is on the screen: say plainly it was not kept
                out("")
                out("[ответ оборвался и не сохранён в истории]")
            out(f"Ошибка чата: {error}")
            continue
        except Exception as error:  # noqa: BLE001 — one bad turn must not end the session
            if shown:
                out("")
                out("[ответ оборвался и не сохранён в истории]")
            out(f"Непредвиденная ошибка ({type(error).__name__}): {error}. Сессия не изменена; можно продолжать.")
            continue
        if shown:
            out("")
        print_reply(result, out, with_text=not shown)


def _context_warning(service: ChatService) -> str | None:
    """The server's context is smaller than budget + reply limit: say so before the first turn."""
    check = getattr(service, "context_warning", None)  # a test double may not have it
    return check() if check is not None else None


def _printer(shown: list[str], write: Callable[[str], None]) -> Callable[[str], None]:
    """Print streamed pieces as they come, after a "Поддержка: " label (the assistant's name in every
    transcript of the course); remember what was shown."""

    def on_delta(piece: str) -> None:
        if not shown:
            write("Поддержка: ")
        shown.append(piece)
        write(piece)

    return on_delta


def _write_now(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib chat",
        description="Консольный чат поддержки. Настройки читаются из .env.",
    )
    parser.add_argument(
        "--store", nargs="?", const=str(DEFAULT_STORE), default=None, metavar="PATH|URL",
        help=f"хранить сессии в файле SQLite (по умолчанию {DEFAULT_STORE.relative_to(DEFAULT_STORE.parents[1])}) "
        "или в PostgreSQL: postgresql://пользователь:пароль@хост:5432/база",
    )
    parser.add_argument("--session", metavar="ID", help="продолжить сессию с этим Session ID (нужен --store)")
    parser.add_argument("--user", metavar="NAME", help="включить долговременную память для клиента (нужен --store)")
    parser.add_argument("--no-stream", action="store_true", help="выводить ответ целиком, а не по мере генерации")
    parser.add_argument(
        "--memory", choices=("facts", "tools"), default="facts",
        help="facts — приложение само извлекает факты (ноутбук 08); tools — памятью управляет модель (ноутбук 09)",
    )
    parser.add_argument(
        "--your-code", action="store_true",
        help="окно истории из ваших функций exercises/ (count_message_tokens, split_into_turns, "
        "select_recent_turns), а строки консоли разбирает ваша console_command; пока функция не прошла "
        "открытые тесты, работает версия курса",
    )
    args = parser.parse_args(argv)
    if args.your_code and args.memory == "tools":
        parser.error("--your-code собирает окно истории чата; с --memory tools историей управляет модель")
    if args.memory == "tools" and args.user is None:
        parser.error("--memory tools нужен --user: память ведётся для каждого клиента отдельно")
    if args.memory == "tools" and args.session is not None:
        parser.error("--memory tools не продолжает сессии (--session): история диалога живёт в процессе, память — в хранилище")
    if args.store is None and any(getattr(args, option) is not None for option in ("session", "user")):
        try:  # CHAT_STORE_URL in .env or the environment stands for --store
            args.store = load_settings().chat_store_url
        except SettingsError as error:
            parser.error(str(error))
    for option in ("session", "user"):
        if getattr(args, option) is not None and args.store is None:
            parser.error(f"--{option} без --store (или CHAT_STORE_URL) бессмыслен: без файла память не переживает процесс")
    if args.user is not None and not args.user.strip():
        parser.error("--user: имя клиента не должно быть пустым")
    return args


WINDOW_EXERCISES = ("count_message_tokens", "split_into_turns", "select_recent_turns")


def _your_window():
    """Notebook 04's ExerciseWindow: the history window built from the student's three functions.

    Each is chosen again on every call; the line for each says which runs now, and a new line
    appears when a saved file changes that (the same lines as under the notebook's cells)."""
    from course_lib.checking.catalog import find_course_root
    from course_lib.steps.window import ExerciseWindow
    from course_lib.tokenizer import TokenCounter
    from course_lib.your_code import your_code

    find_course_root()  # FileNotFoundError with the folder it looked in
    print("Окно истории собирают ваши функции (пока функция не проходит открытые тесты, работает версия курса):")
    for name in WINDOW_EXERCISES:
        your_code(name)  # prints its line: yours, the course's, and why
    return ExerciseWindow(TokenCounter(), load_settings().chat_input_token_budget)


def _your_console_command():
    """Notebook 03's exercise: the student's console_command decides every typed line (the course's
    version while it fails its public cases; the line printed says which runs, and why)."""
    from course_lib.your_code import your_code

    print("Строки консоли разбирает ваша функция (пока она не проходит открытые тесты, работает версия курса):")
    return your_code("console_command")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.store is None:
        try:  # no --store: CHAT_STORE_URL from .env or the environment, when set
            args.store = load_settings().chat_store_url
        except SettingsError as error:
            print(error, file=sys.stderr)
            return 2
    from course_lib.app import build_chat_app  # heavy imports only when the chat really starts
    from course_lib.memory.store import MemoryStoreError
    from course_lib.session_store import SessionStoreError
    from course_lib.store_url import StoreUrlError, open_memory_store, open_session_store, parse_store_location

    try:
        history_policy = _your_window() if args.your_code else None
        decide = _your_console_command() if args.your_code else console_command
    except (FileNotFoundError, SettingsError) as error:
        print(f"--your-code: {error}", file=sys.stderr)
        return 2
    try:
        location = parse_store_location(args.store) if args.store else None
        store = open_session_store(location) if location else None
        memory_store = open_memory_store(location) if location and args.user else None
        app = build_chat_app(store=store, memory_store=memory_store, history_policy=history_policy)
    except (SettingsError, LLMClientError, SessionStoreError, MemoryStoreError, StoreUrlError, sqlite3.Error) as error:
        print(error, file=sys.stderr)
        return 2
    with app:
        if location is not None:
            print(f"Сессии хранятся: {location.display()}")
        if args.memory == "tools":
            from course_lib.tool_memory.agent import ToolMemoryChat
            from course_lib.tool_memory.console import run_tool_console

            chat = ToolMemoryChat(app.llm_client, memory_store, args.user,
                                  input_token_budget=app.settings.chat_input_token_budget)  # fmt: skip
            run_tool_console(chat)
            return 0
        run_console(
            app.chat_service,
            app_env=app.settings.app_env,
            configured_model=app.settings.model,
            backend_label=app.backend_label,
            session_id=args.session,
            user_id=args.user,
            stream=not args.no_stream,
            write=_write_now,
            decide=decide,
        )
    return 0
