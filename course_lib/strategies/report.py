"""Russian tables and verdicts for a `Comparison` (the bench command and notebook 06 share them).

Everything here is formatting: rows of strings, rendered as an aligned text table for the console, as
Markdown, or as a `Table` that a notebook shows as HTML (and nbval compares as text).

Numbers never break across lines: thousands are separated by a narrow no-break space (U+202F,
"1 161 425"), and a unit or "%" is attached with a no-break space (U+00A0, "11,3 %"). Timings are
printed as "0,042 мс" (the notebooks' sanitize file masks that form; notebook 06 shows none).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from course_lib.pricing import DEFAULT_PRICES, Price
from course_lib.russian import tokens
from course_lib.strategies.runner import TARGET_SHARE, Comparison, StrategyRun

SUMMARY_HEADER = (
    "Стратегия",
    "Вызовы",
    "из них сводки",
    "Токены запросов",
    "+ summary",
    "Всего",
    "Доля",
    "Макс. запрос",
    "Факты в запросе",
    "Верные ответы",
    "мс/ход",
)


COST_MODEL = "gpt-4.1"
COST_PRICE = DEFAULT_PRICES[COST_MODEL]
"""The offline model stands in for the course's default model, so its tokens are priced as that."""

THIN_NBSP = "\u202f"
"""Between groups of thousands: a narrow space that never breaks a number across lines."""
NBSP = "\u00a0"
"""Between a number and its unit or "%": a space that never breaks."""


def format_int(value: int) -> str:
    """12345 → "12 345" (a narrow no-break space between thousands, as Russian texts write it)."""
    return f"{value:,}".replace(",", THIN_NBSP)


def format_share(share: float) -> str:
    """0.1123 → "11,2 %" (no-break space before "%")."""
    return f"{share * 100:.1f}{NBSP}%".replace(".", ",")


def format_ms(seconds: float) -> str:
    """0.000042 → "0,042 мс" (no-break space before the unit)."""
    return f"{seconds * 1000:.3f}{NBSP}мс".replace(".", ",")


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


def format_usd(amount: float) -> str:
    """1.2345 → "$1,23"; amounts under a cent keep four decimals ("$0,0042")."""
    digits = 2 if amount >= 0.01 else 4
    return f"${amount:.{digits}f}".replace(".", ",")


def cost_rows(comparison: Comparison, price: Price) -> list[list[str]]:
    """Header + one row per strategy: cost without and with prompt caching, and the cached share."""
    rows = [["Стратегия", "Без кэша", "С кэшем", "Экономия кэша", "Токенов из кэша"]]
    for run in comparison.runs:
        full, cached = run.cost(price, with_cache=False), run.cost(price, with_cache=True)
        rows.append([
            run.title,
            format_usd(full),
            format_usd(cached),
            format_share(1 - cached / full if full else 0.0),
            format_int(run.cached_tokens),
        ])
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


def render_text(rows: Sequence[Sequence[str]], *, numeric: Sequence[int] | None = None) -> str:
    """An aligned plain-text table: the columns in `numeric` (default: all but the first) to the
    right, the others to the left."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = set(range(1, len(rows[0])) if numeric is None else numeric)

    def line(row: Sequence[str]) -> str:
        cells = [cell.rjust(width) if i in right else cell.ljust(width) for i, (cell, width) in enumerate(zip(row, widths))]
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


class Table:
    """Rows of strings that a notebook shows as an HTML table; its text form is the aligned text table.

    The first row is the header. Columns listed in `numeric` (default: all but the first) align right
    and their cells never wrap (`white-space: nowrap`; the numbers carry no-break spaces as well);
    header cells may wrap between words.
    """

    def __init__(self, rows: Sequence[Sequence[str]], *, numeric: Sequence[int] | None = None) -> None:
        if not rows or any(len(row) != len(rows[0]) for row in rows):
            raise ValueError("Таблице нужны строки одинаковой длины, первая — заголовок.")
        self.rows = [list(row) for row in rows]
        self.numeric = frozenset(range(1, len(rows[0])) if numeric is None else numeric)

    def __repr__(self) -> str:
        return render_text(self.rows, numeric=sorted(self.numeric))

    def _repr_html_(self) -> str:
        def cell(tag: str, text: str, index: int) -> str:
            # Headers may wrap between words; a figure never does.
            style = "text-align: right" if index in self.numeric else "text-align: left"
            if tag == "td" and index in self.numeric:
                style += "; white-space: nowrap"
            return f'<{tag} style="{style}">{escape(text)}</{tag}>'

        head, *body = self.rows
        lines = ["<table>", "<thead><tr>" + "".join(cell("th", text, i) for i, text in enumerate(head)) + "</tr></thead>"]
        lines.append("<tbody>")
        lines += ["<tr>" + "".join(cell("td", text, i) for i, text in enumerate(row)) + "</tr>" for row in body]
        lines.append("</tbody></table>")
        return "\n".join(lines)


def target_verdict(comparison: Comparison, name: str = "window_summary") -> str:
    """Whether the strategy (by default window + summary, K = 0) kept every fact at ≤ 1/4 of full
    history's input tokens."""
    best = comparison.run(name)
    checks = len(best.recalls)
    share = comparison.share_of_full(best)
    verdict = "выполнена" if comparison.meets_target(name) else "НЕ выполнена"
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
        parts.append(f"вызовов для сводки {run.summary_calls}")
        parts.append(
            f"предыдущий ответ виден на ходах сжатия: {run.compressions_with_previous_reply} из {run.compressions}"
        )
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
        f"Бюджет окна и порог сводки: {tokens(settings.input_token_budget)}; "
        f"число последних сообщений N = {settings.max_messages}; "
        f"свежих сообщений у «Сводка + K сообщений» K = {settings.keep_recent}; "
        f"свежих ходов у «Окно + сводка + K ходов» K = {settings.keep_recent_turns}.",
        "",
        render_text(summary_rows(comparison, with_timing=with_timing)),
        "",
        "Всего — входные токены за все ходы: запросы чата + запросы сводки.",
        "Доля — «Всего» относительно полной истории. Макс. запрос — самый большой запрос чата.",
        *(["мс/ход — время приложения на подготовку запроса, без ожидания модели."] if with_timing else []),
        "",
        "Верные ответы по вопросам-напоминаниям:",
        render_text(recall_rows(comparison)),
        *recall_legend(comparison),
        "",
        f"Стоимость по ценам {COST_MODEL} (вход ${COST_PRICE.input:g}, вход из кэша "
        f"${COST_PRICE.cached_input:g}, выход ${COST_PRICE.output:g} за 1 млн токенов):",
        render_text(cost_rows(comparison, COST_PRICE)),
        "Кэш промпта (правило OpenAI): совпавший с недавним запросом префикс от 1024 токенов, "
        "шагами по 128, оплачивается со скидкой.",
        "",
        *(describe_run(comparison, run) for run in comparison.runs),
        "",
        *(target_verdict(comparison, name) for name in ("window_summary", "window_summary_k") if _has(comparison, name)),
    ]
    return "\n".join(lines)


def _has(comparison: Comparison, name: str) -> bool:
    return any(run.name == name for run in comparison.runs)
