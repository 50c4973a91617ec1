"""The offline teaching model: a deterministic, rule-based stand-in for a chat model.

It is reached through the real openai SDK (`OfflineTransport` plugs into the SDK's HTTP client), so
requests, response objects and exceptions are the same as with a provider. It knows only what is in
the request: facts the customer stated (`facts`), read from the messages and from a
`<conversation_summary>` block (`dialogue`); it answers in short Russian sentences (`replies`) or,
given a `<conversation_fragment>`, writes a summary (`summary`). Faults can be scheduled (`faults`).

Modules: `lexicon` (vocabulary), `facts`, `intents`, `dialogue`, `replies`, `summary`, `faults`,
`model` (the endpoint), `transport` (the HTTP layer).
"""

from course_lib.llm.offline.facts import Facts, extract_facts
from course_lib.llm.offline.faults import FAULT_KINDS
from course_lib.llm.offline.model import CREATED, OfflineModel, OfflineResponse, completion_id
from course_lib.llm.offline.summary import compose_summary
from course_lib.llm.offline.transport import CHAT_COMPLETIONS_PATH, OFFLINE_BASE_URL, OfflineTransport

__all__ = [
    "CHAT_COMPLETIONS_PATH",
    "CREATED",
    "FAULT_KINDS",
    "OFFLINE_BASE_URL",
    "Facts",
    "OfflineModel",
    "OfflineResponse",
    "OfflineTransport",
    "completion_id",
    "compose_summary",
    "extract_facts",
]
