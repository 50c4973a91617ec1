"""The course's version of exercises/fts_query.py (notebook 08)."""

import re

MIN_WORD_CHARS = 3
PREFIX_CHARS = 5
WORD = re.compile(r"\w+")


def fts_query(text: str, stop_words: list[str]) -> str | None:
    if not isinstance(text, str):
        raise TypeError(f"text: ожидалась строка, а не {type(text).__name__}")
    if type(stop_words) is not list or any(not isinstance(item, str) for item in stop_words):
        raise TypeError("stop_words: ожидался список строк")
    seen = {}  # a dict keeps the order of first appearance
    for match in WORD.finditer(text.casefold()):
        word = match.group()
        if len(word) < MIN_WORD_CHARS or word in stop_words:
            continue
        if len(word) > PREFIX_CHARS and not word.isdigit():
            word = word[:PREFIX_CHARS]
        seen.setdefault('"' + word + '"*', None)
    if not seen:
        return None
    return " OR ".join(seen)
