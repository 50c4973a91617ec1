"""`python -m course_lib bench strategies|memory`: the comparisons of notebooks 06 and 08.

    python -m course_lib bench strategies                 # 200 turns, budget 1000
    python -m course_lib bench strategies --turns 60 --budget 600
    python -m course_lib bench strategies --keep-turns 1  # K of "window + summary + K turns"
    python -m course_lib bench strategies --via-sdk       # through LLMClient and the openai SDK
    python -m course_lib bench memory                     # long-term memory across sessions (07)
    python -m course_lib bench memory-eval                # the memory benchmark: every strategy, every question

Always on the offline teaching model: the figures are reproducible, and nobody pays for the
~1.2 million input tokens that full history costs over 200 turns.
"""

from __future__ import annotations

import argparse
import sys
import time

from course_lib.russian import decimal, turns_count
from course_lib.strategies import (
    StrategyError,
    StrategySettings,
    compare_strategies,
    load_long_dialogue,
)
from course_lib.strategies.report import format_report

DEFAULTS = StrategySettings()


def _int_at_least(minimum: int, wanted: str):
    """An argparse type: a whole number >= `minimum`, with a Russian error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"нужно целое число, получено {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"нужно {wanted}, получено {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "число больше нуля")
_non_negative_int = _int_at_least(0, "неотрицательное число")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib bench",
        description="Замеры курса на офлайн-модели.",
    )
    commands = parser.add_subparsers(dest="command", metavar="ЗАМЕР")
    strategies = commands.add_parser(
        "strategies",
        help="сравнение шести стратегий памяти на длинном диалоге",
        description="Шесть стратегий памяти на одном длинном диалоге: токены, вызовы модели, "
        "сохранность контрольных фактов; доли — относительно полной истории.",
    )
    strategies.add_argument("--turns", type=_positive_int, default=None, metavar="ХОДОВ", help="сколько ходов диалога (по умолчанию все 200)")
    strategies.add_argument(
        "--budget", type=_positive_int, default=DEFAULTS.input_token_budget, metavar="ТОКЕНОВ",
        help=f"бюджет окна и порог summary в токенах (по умолчанию {DEFAULTS.input_token_budget})",
    )
    strategies.add_argument(
        "--messages", type=_positive_int, default=DEFAULTS.max_messages, metavar="N",
        help=f"N для обрезки по числу сообщений (по умолчанию {DEFAULTS.max_messages})",
    )
    strategies.add_argument(
        "--keep", type=_non_negative_int, default=DEFAULTS.keep_recent, metavar="K",
        help=f"K свежих сообщений для «Сводка + K сообщений» (по умолчанию {DEFAULTS.keep_recent})",
    )
    strategies.add_argument(
        "--keep-turns", type=_positive_int, default=DEFAULTS.keep_recent_turns, metavar="K",
        help="K свежих ходов для «Окно + сводка + K ходов», keep_recent_turns у ChatService "
        f"(по умолчанию {DEFAULTS.keep_recent_turns}; K = 0 — это «Окно + сводка»)",
    )
    strategies.add_argument(
        "--via-sdk", action="store_true",
        help="вызывать модель через LLMClient и openai SDK (медленнее, те же цифры)",
    )
    commands.add_parser(
        "memory",
        help="долговременная память: вопросы о прошлых сессиях и цена в токенах",
        description="Пять сессий одной клиентки и две — другого клиента: без памяти, только summary, "
        "долговременные факты, факты + поиск по прошлым ходам (FTS5).",
    )
    from course_lib.memory_eval.cli import add_parser

    add_parser(commands, _positive_int)
    return parser


def _client(via_sdk: bool):
    if via_sdk:
        from course_lib.config import load_settings
        from course_lib.llm.client import LLMClient

        return LLMClient(load_settings(llm_backend="offline"))
    from course_lib.strategies import OfflineDirectClient

    return OfflineDirectClient()


def run_strategies(args: argparse.Namespace) -> int:
    dialogue = load_long_dialogue()
    if args.turns is not None and args.turns > len(dialogue.turns):
        print(f"В диалоге {turns_count(len(dialogue.turns))}, а запрошено {args.turns}.", file=sys.stderr)
        return 2
    settings = StrategySettings(
        input_token_budget=args.budget,
        max_messages=args.messages,
        keep_recent=args.keep,
        keep_recent_turns=args.keep_turns,
    )
    client = _client(args.via_sdk)
    started = time.perf_counter()
    try:
        comparison = compare_strategies(dialogue, client, settings, turns=args.turns)
    except StrategyError as error:
        print(f"Сравнение остановлено: {error}", file=sys.stderr)
        return 1
    finally:
        client.close()
    elapsed = time.perf_counter() - started
    print(format_report(comparison))
    path = "LLMClient + openai SDK" if args.via_sdk else "напрямую, без HTTP-слоя SDK"
    print(
        f"\nМодель: офлайн-модель (учебная; знает только то, что есть в запросе), {path}. "
        f"Замер занял {decimal(elapsed, 1)} с."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "strategies":
        return run_strategies(args)
    if args.command == "memory":
        from course_lib.memory_bench import main as run_memory

        return run_memory()
    if args.command == "memory-eval":
        from course_lib.memory_eval.cli import run as run_memory_eval

        return run_memory_eval(args)
    parser.print_help()
    return 2
