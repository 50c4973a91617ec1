"""Russian tables and verdicts for a `Comparison` (the bench command and notebook 06 share them).

Everything here is formatting: rows of strings, rendered as an aligned text table for the console or
as Markdown for a notebook. Timings are printed as "0,042 мс" (the notebooks' sanitize file masks
that form, so stored outputs stay comparable).
"""

from __future__ import annotations

from collections.abc import Sequence

from course_lib.strategies.runner import TARGET_SHARE, Comparison, StrategyRun

SUMMARY_HEADER = (
    "Стратегия",
    "Вызовы",
    "из них summary",
    "Токены запросов",
    "+ summary",
    "Всего",
    "Доля",
    "Макс. запрос",
    "Факты в запросе",
    "Верные ответы",
    "мс/ход",
)


def format_int(value: int) -> str:
    """12345 → "12 345" (a space between thousands, as Russian texts write it)."""
    return f"{value:,}".replace(",", " ")


def format_share(share: float) -> str:
    """0.1123 → "11,2 %"."""
    return f"{share * 100:.1f} %".replace(".", ",")


def format_ms(seconds: float) -> str:
    """0.000042 → "0,042 мс"."""
    return f"{seconds * 1000:.3f} мс".replace(".", ",")


def summary_rows(comparison: Comparison, *, with_timing: bool = True) -> list[list[str]]:
    """Header + one row per strategy: calls, tokens, share of full history, facts, time."""
    checks = len(comparison.baseline.recalls)
    header = list(SUMMARY_HEADER if with_timing else SUMMARY_HEADER[:-1])
    rows = [header]
    for run in comparison.runs:
        row = [
            run.title,
            format_int(run.model_calls),
            format_int(run.summary_calls),
            format_int(run.total_prompt_tokens),
            format_int(run.total_summary_prompt_tokens),
            format_int(run.total_input_tokens),
            format_share(comparison.share_of_full(run)),
            format_int(run.max_prompt_tokens),
            f"{run.facts_present}/{checks}",
            f"{run.facts_answered}/{checks}",
        ]
        if with_timing:
            row.append(format_ms(run.prepare_seconds / max(1, run.turns)))
        rows.append(row)
    return rows


def recall_rows(comparison: Comparison) -> list[list[str]]:
    """Header + one row per strategy: correct answers at each recall question ("1/2")."""
    recall_turns = [turn for turn in comparison.dialogue.recall_turns if turn.turn <= comparison.turns]
    rows = [["Стратегия", *(f"ход {turn.turn}" for turn in recall_turns)]]
    for run in comparison.runs:
        cells = []
        for turn in recall_turns:
            checks = run.recalls_at(turn.turn)
            cells.append(f"{sum(check.answered for check in checks)}/{len(checks)}")
        rows.append([run.title, *cells])
    return rows


def recall_legend(comparison: Comparison) -> list[str]:
    """"ход 30 — номер заказа (назван в ходе 3)" for every recall question in the run."""
    lines = []
    for turn in comparison.dialogue.recall_turns:
        if turn.turn > comparison.turns:
            continue
        facts = [comparison.dialogue.fact(fact_id) for fact_id in turn.asks]
        asked = ", ".join(f"{fact.label} (ход {fact.turn})" for fact in facts)
        lines.append(f"ход {turn.turn} — {asked}")
    return lines


def render_text(rows: Sequence[Sequence[str]]) -> str:
    """An aligned plain-text table: the first column to the left, the figures to the right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: Sequence[str]) -> str:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    separator = "  ".join("-" * width for width in widths)
    return "\n".join([line(rows[0]), separator, *(line(row) for row in rows[1:])])


def render_markdown(rows: Sequence[Sequence[str]], *, numeric: Sequence[int] | None = None) -> str:
    """A Markdown table; the columns listed in `numeric` (default: all but the first) align right."""
    head, *body = rows
    right = set(range(1, len(head)) if numeric is None else numeric)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if i in right else ":---" for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def target_verdict(comparison: Comparison) -> str:
    """Whether window + summary kept every fact at ≤ 1/4 of full history's input tokens."""
    best = comparison.run("window_summary")
    checks = len(best.recalls)
    share = comparison.share_of_full(best)
    verdict = "выполнена" if comparison.target_met else "НЕ выполнена"
    return (
        f"Цель: «{best.title}» сохраняет все контрольные факты ({best.facts_answered}/{checks} верных "
        f"ответов) при {format_share(share)} входных токенов полной истории "
        f"(нужно не больше {format_share(TARGET_SHARE)}) — {verdict}."
    )


def describe_run(comparison: Comparison, run: StrategyRun) -> str:
    """One sentence: what the strategy kept and what it cost, against full history and the budget."""
    budget = comparison.settings.input_token_budget
    checks = len(run.recalls)
    kept_turns = [
        str(turn.turn)
        for turn in comparison.dialogue.recall_turns
        if turn.turn <= comparison.turns and all(c.answered for c in run.recalls_at(turn.turn))
    ]
    over_budget = sum(1 for tokens in run.prompt_tokens if tokens > budget)
    parts = [
        f"{run.title}: {format_share(comparison.share_of_full(run))} токенов полной истории",
        f"верных ответов {run.facts_answered}/{checks}",
    ]
    if run.facts_answered == checks:
        parts.append("все вопросы-напоминания отвечены")
    elif len(kept_turns) == 1:
        parts.append(f"полностью отвечен только вопрос хода {kept_turns[0]}")
    elif kept_turns:
        parts.append("полностью отвечены вопросы ходов " + ", ".join(kept_turns))
    else:
        parts.append("ни один вопрос-напоминание не отвечен полностью")
    if run.summary_calls:
        parts.append(f"вызовов summary {run.summary_calls}")
    parts.append(
        f"запросов больше бюджета {budget}: {over_budget}" if over_budget else f"бюджет {budget} не превышен"
    )
    return "; ".join(parts) + "."


def format_report(comparison: Comparison, *, with_timing: bool = True) -> str:
    """The whole console report of `python -m course_lib bench strategies`."""
    dialogue = comparison.dialogue
    settings = comparison.settings
    checks = len(comparison.baseline.recalls)
    lines = [
        f"Сравнение стратегий памяти: «{dialogue.title}»",
        f"Ходов: {comparison.turns}; контрольных фактов: {len(dialogue.facts)}; "
        f"проверок фактов в вопросах-напоминаниях: {checks}.",
        f"Бюджет окна и порог summary: {settings.input_token_budget} токенов; "
        f"число последних сообщений N = {settings.max_messages}; "
        f"число свежих сообщений при summary K = {settings.keep_recent}.",
        "",
        render_text(summary_rows(comparison, with_timing=with_timing)),
        "",
        "Всего — входные токены за все ходы: запросы чата + запросы summary.",
        "Доля — «Всего» относительно полной истории. Макс. запрос — самый большой запрос чата.",
        "мс/ход — время приложения на подготовку запроса, без ожидания модели.",
        "",
        "Верные ответы по вопросам-напоминаниям:",
        render_text(recall_rows(comparison)),
        *recall_legend(comparison),
        "",
        *(describe_run(comparison, run) for run in comparison.runs),
        "",
        target_verdict(comparison),
    ]
    return "\n".join(lines)
