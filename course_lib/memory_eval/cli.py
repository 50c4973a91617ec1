"""`python -m course_lib bench memory-eval`: the memory benchmark from the command line.

    python -m course_lib bench memory-eval                          # every strategy, every question
    python -m course_lib bench memory-eval --limit 60 --strategy full --strategy window
    python -m course_lib bench memory-eval --your-code --json out.json   # your exercises and your strategy
    python -m course_lib bench memory-eval --real --limit 40        # the model of your settings (.env)

Offline by default (the course's teaching model, reached without the SDK's HTTP layer: same replies).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time

from course_lib.memory_eval.dataset import DatasetError, load_dataset
from course_lib.memory_eval.harness import run_benchmark
from course_lib.memory_eval.report import format_run, write_json
from course_lib.memory_eval.strategies import MINE, STRATEGY_NAMES
from course_lib.russian import plural

DEFAULT_BUDGET = 1000


def add_parser(commands, positive_int) -> None:
    parser = commands.add_parser(
        "memory-eval",
        help="бенчмарк памяти: вопросы о прошлых разговорах для каждой стратегии",
        description="Клиенты курса (несколько сессий каждый) проигрываются через стратегии памяти, затем каждой "
        "задаются вопросы о прошлых разговорах. Для каждой стратегии: доля верных ответов, доля доказательств "
        "в запросе, отказ там, где ответа нет, токены и цена вопроса, вызовы модели.",
    )
    parser.add_argument("--strategy", action="append", choices=(*STRATEGY_NAMES, MINE), metavar="ИМЯ",
                        help=f"стратегия (можно несколько раз): {', '.join((*STRATEGY_NAMES, MINE))}; по умолчанию все")
    parser.add_argument("--budget", type=positive_int, default=DEFAULT_BUDGET, metavar="ТОКЕНОВ",
                        help=f"бюджет окна и порог сводки в токенах (по умолчанию {DEFAULT_BUDGET})")
    parser.add_argument("--summary-chars", type=positive_int, default=None, metavar="СИМВОЛОВ",
                        help="предел длины сводки (по умолчанию 600, как в ноутбуке 05)")
    parser.add_argument("--limit", type=positive_int, default=None, metavar="ВОПРОСОВ",
                        help="задать только первые N вопросов (быстрый прогон)")
    parser.add_argument("--json", default=None, metavar="ФАЙЛ", help="записать все ответы и сводную таблицу в JSON")
    parser.add_argument("--your-code", action="store_true",
                        help="ваши функции из exercises/ вместо версий курса, ваш score_answer и ваша стратегия (mine)")
    parser.add_argument("--real", action="store_true",
                        help="модель из ваших настроек (.env, OPENAI_BASE_URL) вместо офлайн-модели — это платные запросы")
    parser.add_argument("--quiet", action="store_true", help="без полосы прогресса")
    parser.add_argument("--rescore", metavar="ФАЙЛ", default=None,
                        help="не прогонять, а заново оценить ответы сохранённого прогона правилами score_answer курса")
    parser.add_argument("--meta", action="append", default=[], metavar="КЛЮЧ=ЗНАЧЕНИЕ",
                        help="записать в JSON сведения о прогоне (сервер, версия, файл модели), можно несколько раз")


def run(args: argparse.Namespace) -> int:
    try:
        dataset = load_dataset()
    except DatasetError as error:
        print(error, file=sys.stderr)
        return 2
    if args.rescore:
        from course_lib.memory_eval.report import rescore

        changed = rescore(args.rescore, dataset, dataset.categories)
        print(f"{args.rescore}: оценка изменилась у {plural(changed, ('ответа', 'ответов', 'ответов'))}.")
        return 0
    names = tuple(args.strategy or (*STRATEGY_NAMES, *((MINE,) if args.your_code else ())))
    score = None
    if args.your_code:
        from course_lib.your_code import your_code

        score = your_code("score_answer")
        if MINE in names:
            your_code("my_strategy")  # its one line: which implementation runs
    make_client, model, meta = _clients(args)
    for item in args.meta:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            print(f"--meta {item!r}: нужно КЛЮЧ=ЗНАЧЕНИЕ.", file=sys.stderr)
            return 2
        meta[key.strip()] = value.strip()
    limit = args.limit or len(dataset.questions)
    total = min(limit, len(dataset.questions)) * len(names)
    from tqdm import tqdm

    bar = tqdm(total=total, unit="вопр", desc="Бенчмарк памяти", disable=True if args.quiet else None, file=sys.stderr)
    started = time.perf_counter()
    try:
        run_result = run_benchmark(
            dataset, names, make_client, budget=args.budget, summary_chars=args.summary_chars, limit=args.limit,
            your_code=args.your_code,
            model=model, on_question=bar.update, **({"score": score} if score is not None else {}),
        )  # fmt: skip
    finally:
        bar.close()
    print(format_run(run_result))
    print(f"\nЗамер занял {time.perf_counter() - started:.1f} с.".replace(".", ",", 1))
    if args.json:
        from course_lib.prompts.chat_history_summary import CHAT_HISTORY_SUMMARY_PROMPT

        # The summary prompt's version: its rules decide what a summary keeps (a stored run names it).
        meta |= {"strategies": list(names), "your_code": args.your_code,
                 "summary_prompt": f"chat_history_summary@{CHAT_HISTORY_SUMMARY_PROMPT.version}",
                 "date": datetime.date.today().isoformat()}  # fmt: skip
        write_json(run_result, args.json, meta)
        records = len(run_result.questions) * len(names)
        print(f"JSON: {args.json} ({plural(records, ('запись', 'записи', 'записей'))}).")
    return 0


def _clients(args: argparse.Namespace):
    """(a client factory per strategy, the model's name for reports, what to record about it)."""
    if not args.real:
        from course_lib.strategies import OfflineDirectClient

        return (lambda name: OfflineDirectClient()), "офлайн-модель курса", {"backend": "offline"}
    from course_lib.config import load_settings
    from course_lib.llm.client import LLMClient

    settings = load_settings()
    if settings.llm_backend == "offline":
        print("Настройки выбирают офлайн-модель: укажите ключ или OPENAI_BASE_URL (ноутбук 00), "
              "либо запустите без --real.", file=sys.stderr)  # fmt: skip
        raise SystemExit(2)
    meta = {"backend": "openai", "model_name": settings.model, "base_url": str(settings.openai_base_url or ""),
            "instruction_role": settings.instruction_role, "max_output_tokens": settings.max_output_tokens,
            "temperature": settings.temperature if settings.temperature is not None else "по умолчанию провайдера"}  # fmt: skip
    return (lambda name: LLMClient(settings)), settings.model, meta
