"""Writing the model settings into the course's `.env`, safely.

Only the variables the settings panel owns are replaced; every other line of an existing `.env`
(comments included) stays as it was. The file is written to a temporary file created with mode
0600 and moved into place, so a half-written `.env` never exists and the key is never readable by
other users. Values are checked first: a line break or a quote in a value could otherwise smuggle
extra variables into the file.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

MANAGED = ("LLM_BACKEND", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "LLM_INSTRUCTION_ROLE")
BACKENDS = ("auto", "offline", "openai")
ROLES = ("developer", "system")
_KEY_OR_MODEL = re.compile(r"[A-Za-z0-9._:/@+=\-]+")
_LINE_NAME = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")


class EnvFileError(ValueError):
    """A value cannot go into .env (the message names the field, never the key's value)."""


def validate(values: Mapping[str, str]) -> dict[str, str]:
    """Check the panel's values; return them stripped. Raises `EnvFileError` in Russian."""
    unknown = set(values) - set(MANAGED)
    if unknown:
        raise EnvFileError(f"Эти переменные панель не записывает: {', '.join(sorted(unknown))}.")
    clean = {name: str(value).strip() for name, value in values.items()}
    backend = clean.get("LLM_BACKEND", "auto")
    if backend not in BACKENDS:
        raise EnvFileError(f"LLM_BACKEND: допустимые значения {', '.join(BACKENDS)}.")
    role = clean.get("LLM_INSTRUCTION_ROLE", "developer")
    if role not in ROLES:
        raise EnvFileError("Роль инструкции (LLM_INSTRUCTION_ROLE): developer или system.")
    url = clean.get("OPENAI_BASE_URL", "")
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc or not _KEY_OR_MODEL.fullmatch(url):
            raise EnvFileError("Base URL (OPENAI_BASE_URL): нужен адрес вида http://localhost:11434/v1 "
                               "или https://api.proxyapi.ru/openai/v1 — без пробелов и кавычек; "
                               "для OpenAI оставьте поле пустым.")
    model = clean.get("OPENAI_MODEL", "")
    if "OPENAI_MODEL" in clean and not _KEY_OR_MODEL.fullmatch(model):
        raise EnvFileError("Модель (OPENAI_MODEL): укажите имя модели, например gpt-4.1 или qwen2.5:7b "
                           "(без пробелов и кавычек).")
    key = clean.get("OPENAI_API_KEY", "")
    if key and not _KEY_OR_MODEL.fullmatch(key):
        # Never echo the key: only say what kind of character is wrong.
        raise EnvFileError("Ключ API: в нём есть пробелы, кавычки или другие недопустимые символы. "
                           "Скопируйте ключ заново, целиком и без лишнего.")
    return clean


def read_env(path: Path) -> dict[str, str]:
    """The variables of an existing .env (as the course reads them); {} when there is none."""
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {name: value or "" for name, value in dotenv_values(path, encoding="utf-8").items()}


def update_env_file(path: Path, values: Mapping[str, str]) -> Path:
    """Set `values` in the .env at `path` (created when missing), mode 0600, atomically."""
    clean = validate(values)
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else [
        "# Настройки модели для курса; записаны панелью настроек ноутбука 00. Это секрет: не публикуйте.",
    ]
    written: set[str] = set()
    out: list[str] = []
    for line in lines:
        match = _LINE_NAME.match(line)
        name = match.group(1) if match else None
        if name in clean:
            if name not in written:  # a duplicate of a managed variable is dropped
                out.append(f"{name}={clean[name]}")
                written.add(name)
            continue
        out.append(line)
    out += [f"{name}={clean[name]}" for name in MANAGED if name in clean and name not in written]
    text = "\n".join(out) + "\n"

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".env.", dir=path.parent)  # mkstemp: mode 0600
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    written_back = read_env(path)
    for name, value in clean.items():
        if written_back.get(name, "") != value:
            raise EnvFileError(f"{name}: после записи .env значение читается иначе; проверьте файл.")
    return path
