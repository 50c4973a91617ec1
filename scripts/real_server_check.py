"""What the course does against a real OpenAI-compatible server (run by scripts/real_server.sh).

Prints, step by step: the role fallback, a streamed reply with its first-token latency, the
token-budget correction turn by turn (estimate, factor, the provider's `prompt_tokens`, budget),
the console, and a connection error. Assertions are on mechanics only — a 135M model's wording is
not something to test.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course_lib.app import build_chat_app  # noqa: E402
from course_lib.chat_service import ChatServiceError  # noqa: E402
from course_lib.config import load_settings  # noqa: E402
from course_lib.llm.client import LLMClient  # noqa: E402
from course_lib.llm.errors import LLMClientError  # noqa: E402

DIALOGUE = [
    "Здравствуйте! Меня зовут Анна.",
    "Заказ 7718: монитор пришёл с трещиной на подставке.",
    "Коробка была целой, трещину я увидела при распаковке.",
    "Могу прислать фотографии сегодня вечером.",
    "Отвечайте, пожалуйста, по электронной почте.",
    "Сколько обычно рассматривают такие обращения?",
    "Нужно ли сохранять упаковку до решения?",
    "Напомните, пожалуйста, номер моего заказа.",
    "Курьер приезжал вчера вечером, упаковку я сохранила.",
    "Чек тоже есть, могу приложить его скан.",
    "На корпусе монитора царапин нет, только подставка.",
    "Подскажите, можно ли заменить только подставку?",
]


def main() -> int:
    parser = argparse.ArgumentParser()
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--base-url")
    target.add_argument("--standin", action="store_true",
                        help="run against the built-in llama.cpp stand-in (what CI does)")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--budget", type=int, default=1100)
    args = parser.parse_args()
    if args.standin:
        # The stand-in is the test suite's helper (tests/support), not part of course_lib.
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
        from llamacpp_standin import LlamaCppStandIn

        with LlamaCppStandIn(model_name=args.model) as server:
            args.base_url = server.base_url
            return run(args)
    return run(args)


def _ratio(actual: int | None, estimate: int) -> str:
    return f"×{actual / estimate:.2f}" if actual and estimate else "—"


def run(args: argparse.Namespace) -> int:
    env = {
        "LLM_BACKEND": "openai",
        "OPENAI_API_KEY": "local-server-needs-no-key",
        "OPENAI_BASE_URL": args.base_url,
        "OPENAI_MODEL": args.model,
        "LLM_INSTRUCTION_ROLE": "developer",  # on purpose: the server wants `system`
        "MAX_OUTPUT_TOKENS": "160",
        "OPENAI_MAX_RETRIES": "0",
        "OPENAI_TIMEOUT_SECONDS": "120",
        "CHAT_INPUT_TOKEN_BUDGET": str(args.budget),
        "COURSE_DOTENV": "0",
    }
    os.environ.update(env)
    logging.basicConfig(level=logging.WARNING, format="  [журнал] %(message)s")

    print("== 1. Роль инструкции: developer → system ==")
    client = LLMClient(load_settings())
    result = client.generate([
        {"role": "developer", "content": "Отвечай одним словом."},
        {"role": "user", "content": "Скажи «привет»."},
    ])
    print(f"  роль после запроса: {client.instruction_role}; finish_reason={result.finish_reason}; "
          f"prompt_tokens={result.prompt_tokens}")
    assert client.instruction_role == "system", "ожидался откат на роль system"
    print(f"  контекст модели на сервере: {client.context_size() or 'сервер не сообщает'}")
    warning = client.context_warning(args.budget)
    if warning:
        print(f"  предупреждение: {warning}")
    client.close()
    os.environ["LLM_INSTRUCTION_ROLE"] = env["LLM_INSTRUCTION_ROLE"] = "system"  # learned: no more fallbacks

    print("\n== 2. Потоковый ответ ==")
    with build_chat_app() as app:
        pieces: list[str] = []
        first: list[float] = []
        started = time.perf_counter()

        def show(piece: str) -> None:
            if not first:
                first.append(time.perf_counter() - started)
            pieces.append(piece)
            print(piece, end="", flush=True)

        print("  Поддержка: ", end="", flush=True)
        try:
            reply = app.chat_service.reply("stream", DIALOGUE[1], on_delta=show)
        except ChatServiceError as error:  # e.g. the reply hit MAX_OUTPUT_TOKENS: not saved, as designed
            print(f"\n  [не сохранено] {error}")
            reply = None
        total = time.perf_counter() - started
        print()
        first_at = f"{first[0]:.2f} с" if first else "—"
        print(f"  фрагментов: {len(pieces)}; первый через {first_at}; весь ответ {total:.2f} с")
        if reply is not None:
            # Servers like llama.cpp send no usage in streams: the count is then the one measured before.
            counted = reply.prompt_tokens if reply.prompt_tokens is not None else reply.measured_prompt_tokens
            source = "usage ответа" if reply.prompt_tokens is not None else (
                "замер до отправки" if counted is not None else "сервер не сообщил")
            print(f"  оценка курса {reply.estimated_prompt_tokens} токенов, сервер: {counted if counted is not None else '—'} "
                  f"({_ratio(counted, reply.estimated_prompt_tokens)}, {source}); "
                  f"сессия: {len(app.chat_service.get_session('stream').messages)} сообщения")
        else:
            print(f"  сессия после оборванного ответа: {len(app.chat_service.get_session('stream').messages)} сообщений")
        assert len(pieces) > 1

    print(f"\n== 3. Бюджет {args.budget} токенов провайдера: поправка по ходам ==")
    # A 135M model rarely ends a reply before MAX_OUTPUT_TOKENS, and the course never saves a cut
    # reply; so the session starts with eight stored turns, and every request carries history.
    print(f"  (сессия заранее содержит {len(DIALOGUE)} ходов; ответы модели не важны — важны её prompt_tokens)")
    print("  запрос  оценка  поправка  с поправкой  провайдер  в бюджете  ходов в окне")
    over_after_first = 0
    # The plain window (no summary): a 135M model's summaries run into MAX_OUTPUT_TOKENS, and a
    # failed summary (correctly) stops the turn before the chat request that we want to measure.
    with build_chat_app(with_summary=False) as app:
        service = app.chat_service
        history = []
        for text in DIALOGUE:
            history += [service.build_user_message(text), {"role": "assistant", "content": "Понял, спасибо."}]
        service.store.commit("budget", 0, history, None, unchanged_prefix=0, now=time.time())
        for number, text in enumerate(["Что мне делать дальше?", "Когда будет ответ?", "Напомните номер заказа.",
                                       "Нужны ли ещё фото?"], 1):
            window = service.preview("budget", text)
            samples = service.calibration.evidence(app.llm_client.model).samples
            try:
                service.reply("budget", text)
                outcome = "ответ сохранён"
            except ChatServiceError as error:
                outcome = f"не сохранён: {error}"
            evidence = service.calibration.evidence(app.llm_client.model)
            actual = evidence.last_actual if evidence.samples > samples else None  # this request's count
            within = actual is None or actual <= args.budget  # None: no chat request was sent
            if number > 1 and not within:
                over_after_first += 1
            print(f"  {number:>6}  {window.estimated_tokens:>6}  ×{window.token_factor:<7.2f} {window.corrected_tokens:>11}"
                  f"  {actual if actual is not None else '—':>9}  {'да' if within else 'НЕТ':>9}  {window.context_history_messages // 2:>12}   ({outcome})")
        print(f"  {evidence.describe()}")
        print(f"  запросов сверх бюджета после первого: {over_after_first}")
    assert over_after_first == 0, "после первого ответа запрос превысил бюджет"

    print("\n== 4. Консоль (python -m course_lib chat) ==")
    console = subprocess.run(
        [sys.executable, "-m", "course_lib", "chat"],
        input="Получил заказ 8041 с кофемашиной. Она не включается.\n/exit\n",
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env}, timeout=600,
    )
    for line in console.stdout.splitlines():
        print(f"  {line}")
    assert console.returncode == 0, console.stderr

    print("\n== 5. Ошибка соединения ==")
    os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    broken = LLMClient(load_settings())
    try:
        broken.generate([{"role": "user", "content": "Привет"}])
    except LLMClientError as error:
        print(f"  {type(error).__name__}: {error}")
    else:
        raise AssertionError("ожидалась ошибка соединения")
    print("\nГотово: все проверки прошли.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
