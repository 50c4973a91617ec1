from course_lib.prompts.chat_history_summary.v1_0_0 import CHAT_HISTORY_SUMMARY_PROMPT_V1_0_0
from course_lib.prompts.chat_history_summary.v1_1_0 import CHAT_HISTORY_SUMMARY_PROMPT_V1_1_0
from course_lib.prompts.chat_history_summary.v1_2_0 import CHAT_HISTORY_SUMMARY_PROMPT_V1_2_0
from course_lib.prompts.template import PromptTemplate, select_version

ACTIVE_CHAT_HISTORY_SUMMARY_VERSION = "1.2.0"

_CHAT_HISTORY_SUMMARY_PROMPTS: dict[str, PromptTemplate] = {
    CHAT_HISTORY_SUMMARY_PROMPT_V1_0_0.version: CHAT_HISTORY_SUMMARY_PROMPT_V1_0_0,
    CHAT_HISTORY_SUMMARY_PROMPT_V1_1_0.version: CHAT_HISTORY_SUMMARY_PROMPT_V1_1_0,
    CHAT_HISTORY_SUMMARY_PROMPT_V1_2_0.version: CHAT_HISTORY_SUMMARY_PROMPT_V1_2_0,
}


def get_chat_history_summary_prompt(version: str | None = None) -> PromptTemplate:
    """The active summary prompt, or the given version (`PromptTemplateError` if unknown)."""
    return select_version(
        _CHAT_HISTORY_SUMMARY_PROMPTS,
        ACTIVE_CHAT_HISTORY_SUMMARY_VERSION,
        version,
        "chat_history_summary",
    )


def list_chat_history_summary_versions() -> tuple[str, ...]:
    return tuple(_CHAT_HISTORY_SUMMARY_PROMPTS)
