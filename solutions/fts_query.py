"""Reference solution for exercises/fts_query.py (the statement lives in the stub)."""

import re

MIN_WORD_CHARS = 3
PREFIX_CHARS = 5


def fts_query(text: str, stop_words: list[str]) -> str | None:
    if not isinstance(text, str):
        raise TypeError("text должен быть строкой")
    if not isinstance(stop_words, list) or not all(isinstance(word, str) for word in stop_words):
        raise TypeError("stop_words должен быть списком строк")
    stop = set(stop_words)
    terms = []
    for word in re.findall(r"\w{3,}", text.casefold()):
        if word in stop:
            continue
        stem = word if word.isdigit() or len(word) <= PREFIX_CHARS else word[:PREFIX_CHARS]
        term = f'"{stem}"*'  # inside double quotes FTS5 sees no operators
        if term not in terms:
            terms.append(term)
    return " OR ".join(terms) or None
