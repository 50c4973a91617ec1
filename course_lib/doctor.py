"""`python -m course_lib doctor`: is this environment ready for the course? (Offline, no key needed.)"""

from __future__ import annotations

import sys

from course_lib.config import SettingsError, load_settings
from course_lib.tokenizer import SUPPORTED_ENCODINGS, TokenizerDataError, cache_dir, get_encoding


def main(argv: list[str]) -> int:
    try:
        settings = load_settings()
    except SettingsError as error:
        print(error, file=sys.stderr)
        return 2
    try:
        sizes = {name: get_encoding(name).n_vocab for name in SUPPORTED_ENCODINGS}
    except TokenizerDataError as error:
        print(f"Токенизатор: {error}", file=sys.stderr)
        return 1

    backend = settings.effective_backend
    print(f"course_lib: окружение {settings.app_env}, бэкенд {backend} (LLM_BACKEND={settings.llm_backend})")
    if backend == "openai":
        print(f"  модель {settings.model}, адрес {settings.openai_base_url or 'api.openai.com'}, "
              f"роль инструкции {settings.instruction_role}, ключ задан (не показывается)")
    else:
        print("  офлайн-модель (учебная): ключ не нужен, сеть не используется")
    print(f"  токенизатор офлайн: {', '.join(f'{n} ({v} токенов)' for n, v in sizes.items())}; кэш {cache_dir()}")
    print(f"  бюджет входа CHAT_INPUT_TOKEN_BUDGET={settings.chat_input_token_budget}, "
          f"MAX_OUTPUT_TOKENS={settings.max_output_tokens}")
    return 0
