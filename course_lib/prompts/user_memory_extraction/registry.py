from course_lib.prompts.template import PromptTemplate, select_version
from course_lib.prompts.user_memory_extraction.v1_0_0 import USER_MEMORY_EXTRACTION_PROMPT_V1_0_0

ACTIVE_USER_MEMORY_EXTRACTION_VERSION = "1.0.0"

_PROMPTS: dict[str, PromptTemplate] = {
    USER_MEMORY_EXTRACTION_PROMPT_V1_0_0.version: USER_MEMORY_EXTRACTION_PROMPT_V1_0_0,
}


def get_user_memory_extraction_prompt(version: str | None = None) -> PromptTemplate:
    """The active fact-extraction prompt, or the given version (`PromptTemplateError` if unknown)."""
    return select_version(_PROMPTS, ACTIVE_USER_MEMORY_EXTRACTION_VERSION, version, "user_memory_extraction")


def list_user_memory_extraction_versions() -> tuple[str, ...]:
    return tuple(_PROMPTS)
