"""The instruction that turns a customer's messages into long-term facts (JSON), versioned."""

from course_lib.prompts.user_memory_extraction.registry import (
    ACTIVE_USER_MEMORY_EXTRACTION_VERSION,
    get_user_memory_extraction_prompt,
    list_user_memory_extraction_versions,
)

USER_MEMORY_EXTRACTION_PROMPT = get_user_memory_extraction_prompt()

__all__ = [
    "ACTIVE_USER_MEMORY_EXTRACTION_VERSION",
    "USER_MEMORY_EXTRACTION_PROMPT",
    "get_user_memory_extraction_prompt",
    "list_user_memory_extraction_versions",
]
