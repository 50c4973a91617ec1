"""Application settings read from the environment and `.env`.

Invalid settings fail at start-up (not at the first chat message) with a Russian message that names
the environment variable to fix.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings import SettingsError as PydanticSettingsError

from course_lib.pricing import DEFAULT_PRICES, Price

# The course root's .env is found wherever the code runs from (notebooks/ included);
# a .env in the current directory, if any, overrides it.
PROJECT_ENV_FILE = Path(__file__).resolve().parent.parent / ".env"

Backend = Literal["auto", "offline", "openai"]
InstructionRole = Literal["developer", "system"]

# Russian explanations for the checks pydantic runs; keyed by pydantic's error type.
_ERROR_TEXTS = {
    "greater_than": "значение должно быть больше {gt}",
    "greater_than_equal": "значение должно быть не меньше {ge}",
    "int_parsing": "значение должно быть целым числом",
    "float_parsing": "значение должно быть числом",
    "string_too_short": "значение не должно быть пустым",
    "literal_error": "допустимые значения: {expected}",
    "missing": "значение обязательно",
}


class SettingsError(ValueError):
    """Raised by `load_settings` with a message for the person who edits `.env`."""


class Settings(BaseSettings):
    """Everything the course reads from the environment, with defaults that work offline."""

    model_config = SettingsConfigDict(
        env_file=(PROJECT_ENV_FILE, ".env"),
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        validate_default=True,
    )

    app_env: str = Field(default="development", validation_alias="APP_ENV")
    llm_backend: Backend = Field(default="auto", validation_alias="LLM_BACKEND")
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    model: str = Field(default="gpt-4.1", min_length=1, validation_alias="OPENAI_MODEL")
    instruction_role: InstructionRole = Field(
        default="developer", validation_alias="LLM_INSTRUCTION_ROLE"
    )
    max_output_tokens: int = Field(default=500, gt=0, validation_alias="MAX_OUTPUT_TOKENS")
    # Unset: the provider's default. 0 makes a real model as repeatable as it gets (the benchmark).
    temperature: float | None = Field(default=None, ge=0, le=2, validation_alias="LLM_TEMPERATURE")
    timeout_seconds: float = Field(default=30.0, gt=0, validation_alias="OPENAI_TIMEOUT_SECONDS")
    max_retries: int = Field(default=2, ge=0, validation_alias="OPENAI_MAX_RETRIES")
    chat_input_token_budget: int = Field(
        default=6000, gt=0, validation_alias="CHAT_INPUT_TOKEN_BUDGET"
    )
    # Summaries are a simpler task than answering: a cheaper model often does them well enough.
    summary_model: str | None = Field(default=None, validation_alias="SUMMARY_MODEL")
    summary_max_chars: int = Field(default=600, gt=0, validation_alias="SUMMARY_MAX_CHARS")
    keep_recent_turns: int = Field(default=0, ge=0, validation_alias="CHAT_KEEP_RECENT_TURNS")
    session_ttl_seconds: float | None = Field(
        default=None, gt=0, validation_alias="CHAT_SESSION_TTL_SECONDS"
    )
    # Where sessions (and, with a user, long-term memory) live when the app is built without a store:
    # a SQLite file path or postgresql://… (see course_lib.store_url); empty = in memory only.
    chat_store_url: str | None = Field(default=None, validation_alias="CHAT_STORE_URL")
    # The offline model streams at a reading pace, so streaming is visible; 0 = no pacing (tests, CI).
    offline_stream_chars_per_second: float = Field(
        default=250.0, ge=0, validation_alias="OFFLINE_STREAM_CHARS_PER_SECOND"
    )
    # USD per 1M tokens, added to (or replacing) the defaults: {"model": [input, cached_input, output]}.
    model_prices: dict[str, tuple[float, float, float]] = Field(
        default_factory=dict, validation_alias="MODEL_PRICES"
    )

    @field_validator("openai_api_key", mode="before")
    @classmethod
    def _blank_key_is_no_key(cls, value: object) -> object:
        # `OPENAI_API_KEY=` in .env means "no key", not "an empty key".
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("openai_base_url", "summary_model", "session_ttl_seconds", "chat_store_url", mode="before")
    @classmethod
    def _blank_url_is_default(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("chat_store_url", mode="after")
    @classmethod
    def _known_store(cls, value: str | None) -> str | None:
        # An unknown scheme is a settings error now, not a SQLite file in a folder named "redis:".
        if value is not None:
            from course_lib.store_location import StoreUrlError, parse_store_location

            try:
                parse_store_location(value)
            except StoreUrlError as error:
                raise ValueError(str(error)) from None
        return value

    @field_validator("model_prices", mode="after")
    @classmethod
    def _prices_are_not_negative(cls, value: dict[str, tuple[float, float, float]]) -> object:
        if any(amount < 0 for prices in value.values() for amount in prices):
            raise ValueError("цены не могут быть отрицательными")
        return value

    @property
    def price_table(self) -> dict[str, Price]:
        """The default prices with `MODEL_PRICES` on top."""
        return {**DEFAULT_PRICES, **{name: Price(*prices) for name, prices in self.model_prices.items()}}

    @property
    def effective_summary_model(self) -> str:
        """The model that writes summaries: `SUMMARY_MODEL`, or the chat model when it is unset."""
        return self.summary_model or self.model

    @property
    def effective_backend(self) -> Literal["offline", "openai"]:
        """`auto` resolves to the real API only when a key is configured."""
        if self.llm_backend == "auto":
            return "openai" if self.openai_api_key is not None else "offline"
        return self.llm_backend


def load_settings(**overrides: object) -> Settings:
    """Build `Settings`, turning pydantic's validation errors into one clear Russian message."""
    if os.environ.get("COURSE_DOTENV") == "0":
        # make test / make notebooks: stored outputs must not depend on a developer's .env
        overrides.setdefault("_env_file", None)
    try:
        settings = Settings(**overrides)
    except ValidationError as error:
        raise SettingsError(_describe(error)) from None
    except PydanticSettingsError as error:  # a JSON value that does not parse
        field = re.search(r'field "(\w+)"', str(error))
        variable = _env_name(field.group(1)) if field else "?"
        raise SettingsError(f"Неверные настройки:\n- {variable}: значение должно быть в формате JSON.") from None
    if settings.llm_backend == "openai" and settings.openai_api_key is None:
        raise SettingsError(
            "LLM_BACKEND=openai, но OPENAI_API_KEY не задан. "
            "Укажите ключ в .env или выберите LLM_BACKEND=auto."
        )
    return settings


def _describe(error: ValidationError) -> str:
    lines = ["Неверные настройки:"]
    for item in error.errors(include_url=False):
        field = str(item["loc"][0]) if item["loc"] else "?"
        variable = _env_name(field)
        template = _ERROR_TEXTS.get(item["type"])
        reason = template.format(**item.get("ctx", {})) if template else item["msg"]
        reason = reason.replace("' or '", "' или '")
        shown = "" if "openai_api_key" in field.lower() else f" (получено: {item.get('input')!r})"
        lines.append(f"- {variable}: {reason}{shown}.")
    return "\n".join(lines)


def _env_name(field: str) -> str:
    info = Settings.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    return alias if isinstance(alias, str) else field
