"""Connecting a real model: provider presets and one tiny real call that says what to fix.

Used by the settings panel of notebook 00 (`course_lib.widgets.settings`) and by
`python -m course_lib doctor --check`. The check sends one short request through the course's own
`LLMClient` (the same code path as every notebook) and turns the outcome into Russian advice.
The key is never part of any text this module produces.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from course_lib.config import Settings
from course_lib.llm.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMClientError,
    LLMConnectionError,
    LLMInstructionRoleError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from course_lib.russian import decimal

# One short exchange: a few tokens each way, so a paid check costs a fraction of a cent.
CHECK_MESSAGES = [
    {"role": "developer", "content": "Ответь одним словом."},
    {"role": "user", "content": "Проверка связи. Ответь: готово"},
]
CHECK_MAX_OUTPUT_TOKENS = 16
CHECK_TIMEOUT_SECONDS = 20.0
# Local servers ignore the key, but the openai SDK refuses an empty one.
LOCAL_KEY_PLACEHOLDER = "not-needed"


@dataclass(frozen=True)
class ProviderPreset:
    key: str
    label: str
    base_url: str  # "" = OpenAI's own API
    model: str
    instruction_role: str
    needs_key: bool
    hint: str


PRESETS: tuple[ProviderPreset, ...] = (
    ProviderPreset("openai", "OpenAI", "", "gpt-4.1", "developer", True,
                   "Ключ — на platform.openai.com → API keys."),
    ProviderPreset("proxyapi", "ProxyAPI", "https://api.proxyapi.ru/openai/v1", "gpt-4.1", "developer", True,
                   "Ключ — в личном кабинете ProxyAPI; оплата в рублях."),
    ProviderPreset("ollama", "Ollama", "http://localhost:11434/v1", "qwen2.5:7b", "system", False,
                   "Запустите Ollama и скачайте модель: ollama pull qwen2.5:7b. Ключ не нужен."),
    ProviderPreset("lmstudio", "LM Studio", "http://localhost:1234/v1", "", "system", False,
                   "В LM Studio включите Local Server и впишите id загруженной модели. Ключ не нужен."),
    ProviderPreset("llamacpp", "llama.cpp", "http://localhost:8080/v1", "local-model", "system", False,
                   "Запустите llama-server (или python -m llama_cpp.server). Ключ не нужен."),
    ProviderPreset("offline", "Офлайн-модель (без ключа)", "", "gpt-4.1", "developer", False,
                   "Учебная модель курса: без сети и ключа. Выберите её, чтобы вернуться к офлайн-режиму."),
)
PRESETS_BY_KEY = {preset.key: preset for preset in PRESETS}


def get_preset(key: str) -> ProviderPreset:
    try:
        return PRESETS_BY_KEY[key]
    except KeyError:
        names = ", ".join(PRESETS_BY_KEY)
        raise ValueError(f"Неизвестный провайдер {key!r}; допустимые: {names}.") from None


@dataclass(frozen=True)
class ConnectionReport:
    ok: bool
    lines: tuple[str, ...]
    """What worked or what to change, in Russian; never contains the key."""

    def __str__(self) -> str:
        return "\n".join(self.lines)


def where(settings: Settings) -> str:
    return settings.openai_base_url or "api.openai.com (OpenAI)"


def check_connection(settings: Settings) -> ConnectionReport:
    """Send one tiny request to the model `settings` describe and explain the outcome."""
    from course_lib.llm.client import LLMClient  # the SDK import is paid only when checking

    if settings.effective_backend == "offline":
        return ConnectionReport(True, (
            "Выбрана офлайн-модель: она работает внутри Python, сеть и ключ не нужны — проверять нечего.",
            "Чтобы подключить настоящую модель, выберите провайдера и задайте ключ (OPENAI_API_KEY).",
        ))
    quick = settings.model_copy(update={
        "max_output_tokens": CHECK_MAX_OUTPUT_TOKENS,
        "max_retries": 0,
        "timeout_seconds": min(settings.timeout_seconds, CHECK_TIMEOUT_SECONDS),
    })
    target = f"{settings.model} на {where(settings)}"
    started = perf_counter()
    try:
        client = LLMClient(quick)
        try:
            result = client.generate(CHECK_MESSAGES)
        finally:
            client.close()
    except LLMClientError as error:
        return ConnectionReport(False, (f"✘ Модель {target} не ответила.", *advice(error, quick)))
    elapsed = perf_counter() - started
    text = (result.text or "").strip().replace("\n", " ")
    lines = [f"✔ Модель ответила за {decimal(elapsed, 1)} с: {target} (ответ модели: «{text[:80]}»)."]
    if client.instruction_role != settings.instruction_role:
        lines.append(
            f"Сервер не принял роль {settings.instruction_role}, и ответ пришёл с ролью "
            f"{client.instruction_role}: сохраните «Роль инструкции» = {client.instruction_role}, "
            "чтобы не тратить лишний запрос."
        )
    if result.finish_reason not in (None, "stop", "length"):
        lines.append(f"Необычная причина остановки ответа: {result.finish_reason}.")
    lines.append("Сохраните настройки и перезапустите ядро (Kernel → Restart Kernel), "
                 "затем выполните ноутбук заново.")
    return ConnectionReport(True, tuple(lines))


def _status_code(error: BaseException) -> int | None:
    cause = error.__cause__
    code = getattr(cause, "status_code", None)
    return code if isinstance(code, int) else None


def advice(error: LLMClientError, settings: Settings) -> list[str]:
    """What the failure means and what to change, for this kind of error."""
    url = where(settings)
    local = bool(settings.openai_base_url) and any(
        host in settings.openai_base_url for host in ("localhost", "127.0.0.1", "0.0.0.0", "[::1]"))
    if isinstance(error, LLMTimeoutError):
        return [f"Сервер {url} не ответил за {settings.timeout_seconds:g} с.",
                "Проверьте сеть; локальной модели на слабом компьютере может не хватать времени — "
                "увеличьте OPENAI_TIMEOUT_SECONDS."]
    if isinstance(error, LLMConnectionError):
        lines = [f"Не удалось подключиться к {url}."]
        if local:
            lines.append("Локальный сервер не запущен или слушает другой порт: запустите его "
                         "и сверьте адрес с его выводом (Base URL должен кончаться на /v1).")
        else:
            lines.append("Проверьте подключение к интернету и Base URL (пусто — OpenAI; "
                         "для ProxyAPI https://api.proxyapi.ru/openai/v1).")
        return lines
    if isinstance(error, LLMAuthenticationError):
        return ["Ключ не принят (HTTP 401/403): он неверный, отозван или от другого провайдера.",
                "Вставьте ключ заново (без пробелов и кавычек) и проверьте, что Base URL "
                "принадлежит тому же провайдеру."]
    if isinstance(error, LLMRateLimitError):
        return ["Лимит запросов или квота исчерпаны (HTTP 429): пополните баланс или подождите минуту.",
                "Без модели курс проходится на офлайн-модели (LLM_BACKEND=offline)."]
    if isinstance(error, LLMInstructionRoleError):
        return ["Сервер не принимает роль инструкции ни developer, ни system.",
                "Проверьте документацию сервера; для Ollama, LM Studio и llama.cpp выберите роль system."]
    if isinstance(error, LLMBadRequestError):
        code = _status_code(error)
        if code == 404:
            return [f"Сервер не знает модель «{settings.model}» или адрес неверен (HTTP 404).",
                    "Сверьте имя модели со списком моделей провайдера и Base URL (обычно кончается на /v1)."]
        return [f"Сервер отклонил запрос: {error}",
                "Проверьте имя модели и роль инструкции (для локальных серверов — system)."]
    if isinstance(error, LLMServerError):
        return [f"Ошибка на стороне сервера: {error}",
                "Повторите проверку позже; у локального сервера посмотрите его журнал."]
    return [str(error)]
