from course_lib.prompts.support_chat.v1_0_0 import SUPPORT_CHAT_PROMPT_V1_0_0
from course_lib.prompts.support_chat.v1_1_0 import SUPPORT_CHAT_PROMPT_V1_1_0
from course_lib.prompts.support_chat.v1_2_0 import SUPPORT_CHAT_PROMPT_V1_2_0
from course_lib.prompts.support_chat.v1_3_0 import SUPPORT_CHAT_PROMPT_V1_3_0
from course_lib.prompts.template import PromptTemplate, select_version

ACTIVE_SUPPORT_CHAT_VERSION = "1.1.0"

_SUPPORT_CHAT_PROMPTS: dict[str, PromptTemplate] = {
    prompt.version: prompt
    for prompt in (
        SUPPORT_CHAT_PROMPT_V1_0_0, SUPPORT_CHAT_PROMPT_V1_1_0, SUPPORT_CHAT_PROMPT_V1_2_0, SUPPORT_CHAT_PROMPT_V1_3_0
    )
}


def get_support_chat_prompt(version: str | None = None) -> PromptTemplate:
    """The active support-chat prompt, or the given version (`PromptTemplateError` if unknown)."""
    return select_version(_SUPPORT_CHAT_PROMPTS, ACTIVE_SUPPORT_CHAT_VERSION, version, "support_chat")


def list_support_chat_versions() -> tuple[str, ...]:
    return tuple(_SUPPORT_CHAT_PROMPTS)
