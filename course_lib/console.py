"""`python -m course_lib chat`: the support chat in a terminal, as in the seed's console.

Commands: /new starts a new conversation (new Session ID, the old one is cleared), /exit quits.
End of input (Ctrl-D, or the end of a piped file) also quits cleanly.

`--store [PATH]` keeps sessions in a SQLite file (default `.course-data/sessions.sqlite3` in the
course folder), so `--session ID` continues a conversation in a later process. `--user NAME` turns
long-term memory on for that user (facts from earlier sessions come back; /memory lists them,
/forget erases them from the file). Without `--store` nothing is written to disk.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from uuid import uuid4

from course_lib.chat_service import ChatReply, ChatService, ChatServiceError
from course_lib.config import SettingsError
from course_lib.llm.errors import LLMClientError
from course_lib.memory.context import memory_line
from course_lib.pricing import format_usd

YES_NO = {True: "да", False: "нет"}
DEFAULT_STORE = Path(__file__).resolve().parent.parent / ".course-data" / "sessions.sqlite3"


def print_reply(result: ChatReply, out: Callable[[str], None] = print, *, with_text: bool = True) -> None:
    if with_text:  # a streamed reply is already on the screen
        out(f"Assistant: {result.text}")
    out(f"Session ID ответа: {result.session_id}")
    out(f"Сообщений в истории: {result.history_messages}")
    out(f"Сообщений истории в запросе: {result.context_history_messages}")
    out(f"Сообщений истории отброшено: {result.removed_history_messages}")
    out(f"Оценка входных токенов до запроса: {result.estimated_prompt_tokens}")
    if result.token_factor != 1.0:
        corrected = result.estimated_prompt_tokens * result.token_factor
        out(f"С поправкой на токенизатор провайдера (×{result.token_factor:.2f}): ~{corrected:.0f}")
    if result.calibration is not None:
        out(f"Поправка токенов: {result.calibration.describe()}")
    out(f"Summary сохранено: {YES_NO[result.has_summary]}")
    out(f"Summary обновлено на этом ходу: {YES_NO[result.summary_updated]}")
    out(f"Промпт: {result.prompt_id}@{result.prompt_version}")
    out(f"Время ответа: {result.elapsed_seconds:.2f} с")
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
        out(f"Первый фрагмент ответа через: {result.first_token_seconds:.2f} с")
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
) -> None:
    """`stream`: print the reply piece by piece with `write` (no newline, flushed) as it arrives."""
    out(f"Окружение: {app_env}")
    out(f"Настроенная модель: {configured_model}")
    out(f"Бэкенд: {backend_label}")
    if session_id is None:
        session_id = new_session_id()
        out(f"Session ID: {session_id}")
    else:
        try:
            stored = service.get_session(session_id)
        except ChatServiceError as error:
            out(f"Ошибка чата: {error}")
            return
        session_id = stored.session_id
        out(f"Session ID: {session_id} (продолжаем: сообщений в истории {len(stored.messages)}, "
            f"summary {'есть' if stored.summary else 'нет'})")
    memory = service.memory if user_id is not None else None
    if memory is None:
        out("Команды: /new — новый диалог, /exit — выход.")
    else:
        out(f"Пользователь: {user_id}; долговременная память включена.")
        out("Команды: /new — новый диалог, /memory — что помнит чат, /forget — забыть всё, /exit — выход.")

    while True:
        try:
            user_text = read("\nВы: ")
        except (EOFError, KeyboardInterrupt):
            out("")
            return
        command = user_text.strip()
        if command == "/exit":
            return
        if memory is not None and command == "/memory":
            facts = memory.facts(user_id)
            out("Память о вас пуста." if not facts else "Чат помнит о вас:")
            for fact in facts:
                out(f"  {memory_line(fact)} (сессия {fact.session_id}, ход {fact.turn})")
            continue
        if memory is not None and command == "/forget":
            try:
                removed = service.forget_user(user_id)
            except ChatServiceError as error:
                out(f"Ошибка чата: {error}")
                continue
            out(f"Память о пользователе {user_id} и его диалоги стёрты из файла (записей: {removed}).")
            session_id = new_session_id()
            out(f"Новый Session ID: {session_id}")
            continue
        if command == "/new":
            service.reset_session(session_id)
            session_id = new_session_id()
            out(f"Новый Session ID: {session_id}")
            continue
        shown: list[str] = []
        try:
            result = service.reply(
                session_id, user_text, user_id=user_id,
                on_delta=_printer(shown, write or out) if stream else None,
            )
        except ChatServiceError as error:
            if shown:  # part of a reply is on the screen: say plainly it was not kept
                out("")
                out("[ответ оборвался и не сохранён в истории]")
            out(f"Ошибка чата: {error}")
            continue
        if shown:
            out("")
        print_reply(result, out, with_text=not shown)


def _printer(shown: list[str], write: Callable[[str], None]) -> Callable[[str], None]:
    """Print streamed pieces as they come, after an "Assistant: " label; remember what was shown."""

    def on_delta(piece: str) -> None:
        if not shown:
            write("Assistant: ")
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
        "--store", nargs="?", const=str(DEFAULT_STORE), default=None, metavar="PATH",
        help=f"хранить сессии в файле SQLite (по умолчанию {DEFAULT_STORE.relative_to(DEFAULT_STORE.parents[1])})",
    )
    parser.add_argument("--session", metavar="ID", help="продолжить сессию с этим Session ID (нужен --store)")
    parser.add_argument("--user", metavar="NAME", help="включить долговременную память для пользователя (нужен --store)")
    parser.add_argument("--no-stream", action="store_true", help="выводить ответ целиком, а не по мере генерации")
    args = parser.parse_args(argv)
    for option in ("session", "user"):
        if getattr(args, option) is not None and args.store is None:
            parser.error(f"--{option} без --store бессмысленен: без файла память не переживает процесс")
    if args.user is not None and not args.user.strip():
        parser.error("--user: имя пользователя не должно быть пустым")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    from course_lib.app import build_chat_app  # heavy imports only when the chat really starts
    from course_lib.memory import MemoryStore
    from course_lib.session_store import SessionStoreError, SQLiteSessionStore

    try:
        store = SQLiteSessionStore(args.store) if args.store else None
        memory_store = MemoryStore(args.store) if args.user else None
        app = build_chat_app(store=store, memory_store=memory_store)
    except (SettingsError, LLMClientError, SessionStoreError, sqlite3.Error) as error:
        print(error, file=sys.stderr)
        return 2
    with app:
        if args.store:
            print(f"Сессии хранятся в файле: {args.store}")
        run_console(
            app.chat_service,
            app_env=app.settings.app_env,
            configured_model=app.settings.model,
            backend_label=app.backend_label,
            session_id=args.session,
            user_id=args.user,
            stream=not args.no_stream,
            write=_write_now,
        )
    return 0
