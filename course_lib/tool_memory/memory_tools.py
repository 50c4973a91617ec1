"""The five memory tools of notebook 09, over the course's long-term store (SQLite or PostgreSQL).

- `core_memory_append(label, text)`, `core_memory_replace(label, old, new)`: edit a core block;
- `archival_memory_insert(text)`: keep a note in the archive (the store's searchable turns);
- `archival_memory_search(query, page)`: the archive's best matches, a few per page, as JSON;
- `memory_forget(query)`: remove matching lines from the core blocks and matching archive entries.

Everything a turn's calls change is staged and written only by `commit()`, after the turn's final
reply passed its checks: a turn that fails changes neither the history nor the memory.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from course_lib.memory.store import PREFIX_CHARS, LongTermStore, search_words
from course_lib.tool_memory.core_memory import DEFAULT_LIMITS
from course_lib.tool_memory.core_memory import edit_core_memory as course_edit_core_memory
from course_lib.tool_memory.registry import Tool

PAGE_SIZE = 3
NOTE_SESSION = "archival-notes"
"""The session id under which the model's own notes are archived (they belong to no dialogue)."""


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AppendArguments(_Arguments):
    label: str = Field(min_length=1, max_length=40, description="Блок: «клиент» или «заметки».")
    text: str = Field(min_length=1, max_length=500, description="Что дописать в блок (одна-две строки).")


class ReplaceArguments(_Arguments):
    label: str = Field(min_length=1, max_length=40)
    old: str = Field(min_length=1, max_length=500, description="Текст в блоке, который заменить.")
    new: str = Field("", max_length=500, description="Новый текст; пустой — удалить.")


class InsertArguments(_Arguments):
    text: str = Field(min_length=1, max_length=1000)


class SearchArguments(_Arguments):
    query: str = Field(min_length=1, max_length=200, description="Слова для поиска.")
    page: int = Field(0, ge=0, le=20, description="Страница результатов, с нуля.")


class ForgetArguments(_Arguments):
    query: str = Field(min_length=1, max_length=200, description="Что забыть, например «телефон».")


class MemoryTools:
    """The tools of one user, staged per turn; `registry` is what `run_tool_calls` takes
    (name → a `Tool`, called with the call's arguments as keywords)."""

    def __init__(
        self,
        store: LongTermStore,
        user_id: str,
        *,
        limits: dict[str, int] | None = None,
        page_size: int = PAGE_SIZE,
        clock: Callable[[], float] = time.time,
        edit_core_memory: Callable[[dict, dict, dict], dict] = course_edit_core_memory,
    ) -> None:
        self.store = store
        self.edit_core_memory = edit_core_memory
        self.user_id = user_id
        self.limits = dict(limits or DEFAULT_LIMITS)
        self.page_size = page_size
        self._clock = clock
        self.begin()
        self.registry: dict[str, Tool] = {
            tool.name: tool
            for tool in (
                Tool("core_memory_append", "Дописать строку в блок основной памяти (она видна в каждом запросе).",
                     AppendArguments, self._append),
                Tool("core_memory_replace", "Заменить или удалить текст в блоке основной памяти.",
                     ReplaceArguments, self._replace),
                Tool("archival_memory_insert", "Сохранить заметку в архив (вне контекста, найдётся поиском).",
                     InsertArguments, self._insert),
                Tool("archival_memory_search", "Найти в архиве прошлые разговоры и заметки.",
                     SearchArguments, self._search),
                Tool("memory_forget", "Забыть по просьбе клиента: убрать из блоков и из архива.",
                     ForgetArguments, self._forget),
            )
        }  # fmt: skip

    # --- a turn's staging -----------------------------------------------------------------------

    def begin(self) -> None:
        """Start a turn: the blocks as stored, nothing pending."""
        self._blocks = self.store.core_blocks(self.user_id)
        self._changed: set[str] = set()
        self._notes: list[str] = []
        self._forgets: list[str] = []

    def blocks(self) -> dict[str, str]:
        """The core blocks as this turn sees them (staged edits included)."""
        return dict(self._blocks)

    def commit(self, session_id: str, turn: int) -> None:
        now = self._clock()
        for label in sorted(self._changed):
            self.store.save_core_block(self.user_id, label, self._blocks.get(label, ""), now=now)
        for query in self._forgets:
            self.store.forget_matching(self.user_id, query)
        for note in self._notes:
            self.store.archive_turn(self.user_id, NOTE_SESSION, turn, "", note, now=now)
        self.begin()

    # --- the tools ------------------------------------------------------------------------------

    def _append(self, arguments: AppendArguments) -> str:
        return self._edit({"action": "append", "label": arguments.label, "text": arguments.text})

    def _replace(self, arguments: ReplaceArguments) -> str:
        return self._edit({"action": "replace", "label": arguments.label, "old": arguments.old, "new": arguments.new})

    def _edit(self, command: dict[str, str]) -> str:
        # A refused edit raises (CoreMemoryError): run_tool_calls turns it into the model's result.
        self._blocks = self.edit_core_memory(dict(self._blocks), dict(self.limits), command)
        label = command["label"]
        self._changed.add(label)
        return f"Блок «{label}»: {len(self._blocks[label])}/{self.limits[label]} символов."

    def _insert(self, arguments: InsertArguments) -> str:
        self._notes.append(" ".join(arguments.text.split()))
        return "Заметка сохранена в архив."

    def _search(self, arguments: SearchArguments) -> str:
        start = arguments.page * self.page_size
        found = self.store.search_turns(self.user_id, arguments.query, limit=start + self.page_size + 1)
        page = found[start : start + self.page_size]
        results = [
            {"заметка": turn.assistant_text} if turn.session_id == NOTE_SESSION
            else {"клиент": turn.user_text, "поддержка": turn.assistant_text}
            for turn in page
        ]  # fmt: skip
        results += [{"заметка": note} for note in self._notes if _matches(note, arguments.query)]
        return json.dumps({"results": results, "page": arguments.page, "more": len(found) > start + self.page_size},
                          ensure_ascii=False)  # fmt: skip

    def _forget(self, arguments: ForgetArguments) -> str:
        removed = 0
        for label, value in list(self._blocks.items()):
            lines = value.splitlines()
            kept = [line for line in lines if not _matches(line, arguments.query)]
            if len(kept) != len(lines):
                removed += len(lines) - len(kept)
                self._blocks[label] = "\n".join(kept)
                self._changed.add(label)
        self._forgets.append(arguments.query)
        self._notes = [note for note in self._notes if not _matches(note, arguments.query)]
        return f"Удалено строк из блоков: {removed}; записи архива с «{arguments.query}» будут стёрты."


def _matches(text: str, query: str) -> bool:
    """Whether `text` has a word starting like a word of `query` (the archive's own prefix rule)."""
    stems = [word[:PREFIX_CHARS] if len(word) > PREFIX_CHARS and not word.isdigit() else word
             for word in search_words(query)]  # fmt: skip
    return any(re.search(rf"(?<!\w){re.escape(stem)}", text.casefold()) for stem in stems)
