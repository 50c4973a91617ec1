"""Data blocks in XML-like tags that the data itself cannot close early.

Text from a customer or from a model's summary is wrapped in tags such as `<customer_message>`.
If that text contained `</customer_message>`, everything after it would read as if it stood outside
the block. We neutralise every course tag inside the data by escaping its `<`.
"""

from __future__ import annotations

import re

COURSE_TAGS = (
    "customer_message",
    "conversation_summary",
    "previous_summary",
    "conversation_fragment",
    "user_memory",
    "recalled_turns",
    "memory_source",
    "core_memory",
)
_TAG_PATTERN = re.compile(r"<(\s*/?\s*(?:%s)\b)" % "|".join(COURSE_TAGS), re.IGNORECASE)


def neutralize_tags(text: str) -> str:
    """Escape any course tag inside `text` so it stays data (`<tag>` becomes `&lt;tag>`)."""
    return _TAG_PATTERN.sub(r"&lt;\1", text)


def wrap_in_tag(tag: str, text: str) -> str:
    """`<tag>\\ntext\\n</tag>` with the text unable to close the block itself."""
    return f"<{tag}>\n{neutralize_tags(text)}\n</{tag}>"


def unwrap_tag(tag: str, text: str) -> str:
    """The inside of `<tag>...</tag>` if `text` is exactly such a block, else `text` unchanged."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    stripped = text.strip()
    if stripped.startswith(opening) and stripped.endswith(closing):
        return stripped[len(opening) : -len(closing)].strip()
    return text
