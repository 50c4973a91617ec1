"""`python -m course_lib chat --memory tools --user NAME`: the chat of notebook 09 in a terminal.

Each tool call the model makes is printed as one line, `⚙ имя(аргументы) → результат`, before the
reply, so a scripted dialogue shows what the model did with its memory. Commands: /new (a new
dialogue; the memory stays), /memory (the core blocks), /forget (erase everything about the user),
/exit.
"""

from __future__ import annotations

from collections.abc import Callable

from course_lib.console_input import typed_lines
from course_lib.tool_memory.agent import ToolAgentError, ToolMemoryChat


def run_tool_console(
    chat: ToolMemoryChat, read: Callable[[str], str] = input, out: Callable[[str], None] = print
) -> None:
    out(f"Пользователь: {chat.user_id}; память ведёт модель (инструменты).")
    out("Команды: /new — новый диалог, /memory — основная память, /forget — забыть всё, /exit — выход.")
    out(f"Session ID: {chat.session_id}")
    for user_text in typed_lines(read, out):
        command = user_text.strip()
        if command == "/new":
            out(f"Новый Session ID: {chat.new_session()}")
            continue
        if command == "/memory":
            blocks = chat.tools.blocks()
            if not any(blocks.values()):
                out("Основная память пуста.")
            for label, value in blocks.items():
                out(f"[{label}]\n{value}")
            continue
        if command == "/forget":
            erased = chat.tools.store.forget(chat.user_id)
            chat.tools.begin()
            out(f"Память о пользователе {chat.user_id} стёрта (записей: {erased}).")
            out(f"Новый Session ID: {chat.new_session()}")
            continue
        try:
            result = chat.reply(user_text, on_step=lambda step: out(step.line()))
        except ToolAgentError as error:
            out(f"Ошибка чата: {error}")
            continue
        out(f"Поддержка: {result.text}")
