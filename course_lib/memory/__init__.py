"""Long-term memory (notebook 07): facts about a user and their earlier turns, across sessions.

| module | job |
|---|---|
| `facts` | the fact kinds, the extraction JSON schema (pydantic) and `MemoryFact` |
| `extractor` | `MemoryExtractor`: one model call with the `user_memory_extraction` prompt |
| `store` | `MemoryStore`: facts with history, archived turns with FTS5 search, forgetting |
| `context` | what goes into a request, under which budget, in which order |
| `long_term` | `LongTermMemory`: before a reply (context) and after it (archive, extract) |
"""

from course_lib.memory.context import build_memory_message, build_recall_message, select_memories
from course_lib.memory.extractor import MemoryExtractor
from course_lib.memory.facts import (
    KIND_PRIORITY,
    ExtractedFact,
    MemoryExtractionError,
    MemoryFact,
    parse_extraction,
)
from course_lib.memory.long_term import ExtractionOutcome, LongTermMemory, MemoryContext
from course_lib.memory.store import ArchivedTurn, MemoryStore, MemoryUpdate

__all__ = [
    "KIND_PRIORITY",
    "ArchivedTurn",
    "ExtractedFact",
    "ExtractionOutcome",
    "LongTermMemory",
    "MemoryContext",
    "MemoryExtractionError",
    "MemoryExtractor",
    "MemoryFact",
    "MemoryStore",
    "MemoryUpdate",
    "build_memory_message",
    "build_recall_message",
    "parse_extraction",
    "select_memories",
]
