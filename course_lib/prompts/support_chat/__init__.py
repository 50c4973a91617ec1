"""The support chat's instruction, versioned: 1.0.0 (plain chat), 1.1.0 (knows <conversation_summary>),
1.2.0 (also knows <user_memory> and <recalled_turns>, notebook 07), 1.3.0 (memory tools and
<core_memory>, notebook 09)."""

from course_lib.prompts.support_chat.registry import (
    ACTIVE_SUPPORT_CHAT_VERSION,
    get_support_chat_prompt,
    list_support_chat_versions,
)

SUPPORT_CHAT_PROMPT = get_support_chat_prompt()

__all__ = [
    "ACTIVE_SUPPORT_CHAT_VERSION",
    "SUPPORT_CHAT_PROMPT",
    "get_support_chat_prompt",
    "list_support_chat_versions",
]
