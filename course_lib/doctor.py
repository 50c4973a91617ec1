"""`python -m course_lib doctor [--check]`: is this environment ready for the course?

Without options it is offline and needs no key. `--check` also makes one tiny real call to the
configured model (the settings panel's «Проверить», from a terminal) and says what to change.
"""

from __future__ import annotations

import sys

from course_lib.config import SettingsError, load_settings
from course_lib.russian import tokens
from course_lib.tokenizer import SUPPORTED_ENCODINGS, TokenizerDataError, cache_dir, get_encoding


USAGE = "Использование: python -m course_lib doctor [--check]"


def main(argv: list[str]) -> int:
    unknown = [arg for arg in argv if arg != "--check"]
    if unknown:
        print(f"Неизвестный аргумент: {' '.join(unknown)}\n{USAGE}", file=sys.stderr)
        return 2
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
    print(f"  токенизатор офлайн: {', '.join(f'{n} ({tokens(v)})' for n, v in sizes.items())}; кэш {cache_dir()}")
    print(f"  бюджет входа CHAT_INPUT_TOKEN_BUDGET={settings.chat_input_token_budget}, "
          f"MAX_OUTPUT_TOKENS={settings.max_output_tokens}")
    if "--check" not in argv:
        return 0
    from course_lib.model_connection import check_connection

    print("Проверка связи с моделью (один короткий запрос):")
    report = check_connection(settings)
    print("  " + str(report).replace("\n", "\n  "))
    if not report.ok:
        print("  Продолжить без модели: LLM_BACKEND=offline в .env (или панель настроек в ноутбуке 00).")
    return 0 if report.ok else 1
