"""Benchmark: `SlidingWindowHistory.prepare()` against the seed's re-counting version, in one run.

    python benchmarks/bench_prepare.py            # 100, 1,000 and 10,000 turns; budgets 6,000 and 128,000
    python benchmarks/bench_prepare.py --seed-limit 30   # skip seed runs expected to take longer than 30 s

The seed's `prepare()` rebuilds and re-tokenizes the whole candidate list for every turn it tries,
so its cost grows with the square of the turns that fit. Ours counts each message once per call
(and a warm `TokenCounter` cache makes a repeated call cheaper still), so it grows linearly with
the turns that fit and does no tokenization at all for turns beyond the window — but a plain list
handed in from outside is still checked whole on every call (O(n)).
A session's own history is a `WholeHistory` (what `ChatService` passes): checked once when built,
grown turn by turn, with running token totals — a warm call is a binary search, O(log n).
LangChain's `trim_messages` is added as a last column when `langchain_core` is installed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tiktoken  # noqa: E402

from course_lib.chat_history import SlidingWindowHistory, TokenCounter  # noqa: E402
from course_lib.tokenizer import REPLY_PRIMER_TOKENS, TOKENS_PER_MESSAGE  # noqa: E402
from course_lib.whole_history import WholeHistory  # noqa: E402

PHRASES = [
    "Получил заказ {n} с кофемашиной, она не включается.",
    "Я уже проверил две розетки и удлинитель, индикаторы не горят.",
    "Коробка была целой, но на корпусе небольшая царапина возле панели управления.",
    "Подскажите, пожалуйста, какие документы нужны для обращения и куда их отправить?",
    "Спасибо.",
    "Курьер приезжал вчера вечером, упаковку я сохранил, чек тоже есть, фото сделал при распаковке.",
]
REPLIES = [
    "Понимаю. Уточните, пожалуйста, горит ли индикатор питания?",
    "Спасибо за подробности. Сохраните упаковку и сделайте фото этикетки с серийным номером.",
    "Хорошо.",
]


def synthetic_history(turns: int) -> list[dict[str, str]]:
    """Deterministic Russian turns of varied length."""
    history: list[dict[str, str]] = []
    for i in range(turns):
        text = PHRASES[i % len(PHRASES)].format(n=1000 + i) + (" Ещё деталь." * (i % 4))
        history.append({"role": "user", "content": f"<customer_message>\n{text}\n</customer_message>"})
        history.append({"role": "assistant", "content": REPLIES[i % len(REPLIES)]})
    return history


class SeedTokenCounter:
    """Faithful copy of the seed's counter: no cache, re-encodes every text every time."""

    def __init__(self, encoding_name: str = "o200k_base") -> None:
        self._encoding = tiktoken.get_encoding(encoding_name)

    def count_text(self, text: str) -> int:
        return len(self._encoding.encode(text))

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        total = REPLY_PRIMER_TOKENS
        for message in messages:
            total += TOKENS_PER_MESSAGE
            total += self.count_text(message["role"])
            total += self.count_text(message["content"])
        return total


def seed_prepare(counter, budget, developer_message, history, user_message, context_messages=None):
    """Faithful copy of the seed's final `prepare()` (step 4 of the summary lesson)."""
    turns = [history[i : i + 2] for i in range(0, len(history), 2)]
    fixed_context = context_messages or []
    required = counter.count_messages([developer_message, *fixed_context, user_message])
    if required > budget:
        raise RuntimeError("required part does not fit")
    selected_history: list[dict[str, str]] = []
    for turn in reversed(turns):
        candidate_history = [*turn, *selected_history]
        candidate_messages = [developer_message, *fixed_context, *candidate_history, user_message]
        if counter.count_messages(candidate_messages) > budget:
            break
        selected_history = candidate_history
    messages = [developer_message, *fixed_context, *selected_history, user_message]
    return messages, counter.count_messages(messages), len(selected_history)


def langchain_prepare():
    """LangChain's trim_messages as a function of (budget, messages), or None when not installed."""
    try:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages
    except ImportError:
        return None
    encoding = tiktoken.get_encoding("o200k_base")
    kinds = {"developer": SystemMessage, "user": HumanMessage, "assistant": AIMessage}

    def counter(messages) -> int:
        return REPLY_PRIMER_TOKENS + sum(
            TOKENS_PER_MESSAGE + len(encoding.encode(m.type)) + len(encoding.encode(m.content))
            for m in messages
        )

    def run(budget, developer_message, history, user_message):
        converted = [kinds[m["role"]](m["content"]) for m in [developer_message, *history, user_message]]
        return trim_messages(
            converted, max_tokens=budget, token_counter=counter, strategy="last",
            include_system=True, start_on="human", end_on="human", allow_partial=False,
        )

    return run


def timed(function, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--budgets", type=int, nargs="+", default=[6_000, 128_000])
    parser.add_argument(
        "--seed-limit", type=float, default=120.0,
        help="skip a seed run whose predicted time (quadratic from the last one) exceeds this many seconds",
    )
    args = parser.parse_args()

    developer = {"role": "developer", "content": "Ты помогаешь клиенту в чате службы поддержки. " * 5}
    user = {"role": "user", "content": "<customer_message>\nНапомните номер заказа.\n</customer_message>"}
    seed_counter = SeedTokenCounter()
    lc = langchain_prepare()

    header = (
        f"{'turns':>7} {'budget':>8} {'kept':>6} {'seed, s':>9} {'ours cold, s':>13} {'ours warm, s':>13}"
        f" {'whole warm, s':>14} {'seed/cold':>10} {'list/whole':>11}"
    )
    if lc:
        header += f" {'langchain, s':>13}"
    print(header)
    seed_rate: dict[int, float] = {}  # budget -> seconds per (kept turns)^2, to predict the next run
    for turns in args.turns:
        history = synthetic_history(turns)
        for budget in args.budgets:
            counter = TokenCounter()
            policy = SlidingWindowHistory(counter, budget)
            cold = timed(lambda: policy.prepare(developer, history, user), 1)
            warm = timed(lambda: policy.prepare(developer, history, user), 5)
            prepared = policy.prepare(developer, history, user)
            kept_turns = prepared.context_history_messages // 2
            whole = WholeHistory(history)
            policy.prepare(developer, whole, user)  # builds the running totals once
            whole_warm = timed(lambda: policy.prepare(developer, whole, user), 20)
            assert policy.prepare(developer, whole, user) == prepared, "list and WholeHistory disagree"

            predicted = seed_rate.get(budget, 0.0) * kept_turns**2
            if predicted > args.seed_limit:
                seed_cell, ratio_cell = f"~{predicted:.0f} skip", "-"
            else:
                seed_time = timed(lambda: seed_prepare(seed_counter, budget, developer, history, user), 1)
                _, seed_tokens, seed_kept = seed_prepare(seed_counter, budget, developer, history, user)
                assert seed_kept == prepared.context_history_messages, "seed and ours disagree"
                assert seed_tokens == prepared.estimated_tokens, "token estimates disagree"
                seed_rate[budget] = seed_time / max(kept_turns, 1) ** 2
                seed_cell, ratio_cell = f"{seed_time:.4f}", f"{seed_time / cold:.0f}x"
            row = (
                f"{turns:>7} {budget:>8} {kept_turns:>6} {seed_cell:>9} {cold:>13.5f} {warm:>13.5f}"
                f" {whole_warm:>14.6f} {ratio_cell:>10} {warm / whole_warm:>10.0f}x"
            )
            if lc:
                row += f" {timed(lambda: lc(budget, developer, history, user), 1):>13.4f}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
