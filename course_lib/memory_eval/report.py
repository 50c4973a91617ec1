"""The benchmark's tables in Russian, and its JSON record (one line per strategy and question)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from course_lib.memory_eval.dataset import CATEGORY_TITLES
from course_lib.memory_eval.harness import BenchmarkRun, QuestionRecord, StrategyResult
from course_lib.pricing import DEFAULT_PRICES, Price
from course_lib.russian import decimal, plural

PRICE_MODEL = "gpt-4.1"
PRICE = DEFAULT_PRICES[PRICE_MODEL]


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f} %"


def number(value: float, digits: int = 0) -> str:
    """«2 914», «0,75»: a space between thousands, a decimal comma."""
    text = f"{value:,.{digits}f}".replace(",", " ").replace(".", ",")
    return text


def usd(value: float) -> str:
    return "$" + decimal(value, 5)


class Table(str):
    """A table as text (what the console prints and `str()` gives) that a notebook, when the table is
    displayed rather than printed, draws as HTML: a wide text table would wrap in a narrow output area."""

    rows: tuple[tuple[str, ...], ...]

    def __new__(cls, rows: list[tuple[str, ...]]) -> Table:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = []
        for index, row in enumerate(rows):
            cells = [cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)]
            lines.append("  ".join(cells).rstrip())
            if index == 0:
                lines.append("  ".join("-" * width for width in widths))
        table = super().__new__(cls, "\n".join(lines))
        table.rows = tuple(rows)
        return table

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # text/plain of a displayed table: the text itself
        printer.text(str(self))

    def _repr_html_(self) -> str:
        def row(cells: tuple[str, ...], tag: str) -> str:
            return "<tr>" + "".join(
                f'<{tag} style="text-align:{"left" if i == 0 else "right"}">{html.escape(cell)}</{tag}>'
                for i, cell in enumerate(cells)
            ) + "</tr>"

        head, *body = self.rows
        return f"<table>{row(head, 'th')}{''.join(row(cells, 'td') for cells in body)}</table>"


def _table(rows: list[tuple[str, ...]]) -> Table:
    return Table(rows)


def overall_table(results: Sequence[StrategyResult], price: Price = PRICE, *, with_time: bool = True) -> Table:
    """One row per strategy; `with_time=False` leaves out the seconds (they depend on the machine)."""
    rows = [("Стратегия", "Ответы верны", "Доказательства в запросе", "Отказ, где надо", "Вход вопроса",
             "С расходами памяти", "Цена вопроса", "Вызовов модели", "Время")]  # fmt: skip
    for result in results:
        rows.append((
            result.title, percent(result.accuracy()), percent(result.evidence_recall()),
            percent(result.abstention_accuracy()), number(result.input_tokens_per_question),
            number(result.total_input_per_question), usd(result.cost_per_question(price)), number(result.calls),
            f"{number(result.seconds, 1)} с",
        ))  # fmt: skip
    if not with_time:
        rows = [row[:-1] for row in rows]
    return _table(rows)


def category_scores(records: list[dict]) -> dict[str, dict]:
    """Per category, in the order categories first appear: how many questions, the share answered
    correctly and the share of evidence values that reached the request (None where the category's
    questions have no evidence: nothing to find). Records are the run's JSON lines; none is changed."""
    totals: dict[str, dict] = {}
    for record in records:
        tally = totals.setdefault(record["category"], {"questions": 0, "correct": 0, "found": 0, "needed": 0})
        tally["questions"] += 1
        tally["correct"] += record["correct"]  # a question nobody can answer is correct when it was declined
        tally["found"] += record["evidence_found"]  # evidence counts as values: two orders are two
        tally["needed"] += record["evidence_total"]
    return {category: {"questions": t["questions"], "accuracy": t["correct"] / t["questions"],
                       "evidence_recall": t["found"] / t["needed"] if t["needed"] else None}
            for category, t in totals.items()}


# Notebook 10's fill-in: the student writes `category_scores` in the notebook and passes it as
# `scores=`; until it gives the examples' answers, the course's version above builds the table.
Scores = Callable[[list[dict]], dict[str, dict]]


def category_table(results: Sequence[StrategyResult], categories: Sequence[str], *,
                   scores: Scores = category_scores) -> Table:
    """Answer accuracy per category; in brackets, evidence recall where a category has evidence.
    The figures are what `scores` makes of each strategy's records (a category it leaves out: «—»)."""
    rows = [("Стратегия", *(CATEGORY_TITLES[c] for c in categories))]
    for result in results:
        by_category = scores([record.as_json() for record in result.records])
        cells = []
        for category in categories:
            figures = by_category.get(category, {})
            accuracy, recall = figures.get("accuracy"), figures.get("evidence_recall")
            cells.append(percent(accuracy) + (f" ({percent(recall)})" if recall is not None else ""))
        rows.append((result.title, *cells))
    return _table(rows)


def format_run(run: BenchmarkRun) -> str:
    customers = len({q.customer for q in run.questions})
    questions = len(run.questions)
    categories = [c for c in run.dataset.categories if any(q.category == c for q in run.questions)]
    lines = [
        f"Бенчмарк памяти: {plural(customers, ('клиент', 'клиента', 'клиентов'))}, "
        f"{plural(questions, ('вопрос', 'вопроса', 'вопросов'))}, бюджет окна {plural(run.budget, ('токен', 'токена', 'токенов'))}; "
        f"модель: {run.model}.",
        "",
        overall_table(run.results),
        "",
        "Верные ответы по категориям (в скобках — доля доказательств, попавших в запрос):",
        category_table(run.results, categories),
        "",
        "Вход вопроса — токены запросов, которые понадобились для ответа; с расходами памяти — плюс доля того, что "
        "память потратила за весь разговор (сводки, извлечение фактов, вызовы инструментов).",
        f"Цена — по ценам {PRICE_MODEL} (вход ${number(PRICE.input, 2)}, выход ${number(PRICE.output, 2)} за 1 млн "
        "токенов), тоже вместе с расходами памяти.",
    ]
    leaks = sum(result.leaks for result in run.results)
    if leaks:
        lines.append(f"Забытые значения остались в запросах: {leaks}.")
    for result in (r for r in run.results if r.refused_turns):
        lines.append(f"{result.title}: не принято {plural(result.refused_turns, ('сообщение', 'сообщения', 'сообщений'))} "
                     "разговора (не помещаются в бюджет) — в памяти их нет.")
    errors = [(r.title, r.errors) for r in run.results if r.errors]
    for title, count in errors:
        lines.append(f"{title}: без ответа из-за ошибки — {plural(count, ('вопрос', 'вопроса', 'вопросов'))}.")
    return "\n".join(lines)


def run_json(run: BenchmarkRun, meta: dict) -> dict:
    categories = list(run.dataset.categories)
    return {
        "format": 1,
        "meta": {**meta, "budget": run.budget, "model": run.model, "questions": len(run.questions),
                 "customers": len({q.customer for q in run.questions}), "seconds": round(run.seconds, 2),
                 "price_model": PRICE_MODEL},  # fmt: skip
        "summary": [result.summary(categories, PRICE) for result in run.results],
        "records": [record.as_json() for result in run.results for record in result.records],
    }


def write_json(run: BenchmarkRun, path: Path, meta: dict) -> None:
    """The run as JSON: meta and summary indented, one line per record (a diff shows what changed)."""
    _write(path, run_json(run, meta))


def _write(path: Path, data: dict) -> None:
    data = dict(data)
    records = data.pop("records")
    head = json.dumps(data, ensure_ascii=False, indent=1)[:-2]
    lines = ",\n".join("  " + json.dumps(record, ensure_ascii=False) for record in records)
    Path(path).write_text(f'{head},\n "records": [\n{lines}\n ]\n}}\n', encoding="utf-8")


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def rescore(path: Path, dataset, categories: Sequence[str]) -> int:
    """Judge a stored run's replies again with the course's `score_answer` (after its rules changed);
    rewrites the file keeping its meta; returns how many answers changed their verdict."""
    from course_lib.memory_eval.harness import is_abstention
    from course_lib.memory_eval.scoring import score_answer

    data = read_json(path)
    changed = 0
    for record in data["records"]:
        question = dataset.question(record["question"])
        verdict = record["error"] is None and score_answer(
            record["reply"], [list(g) for g in question.expected], [list(g) for g in question.rejected], question.abstain)
        changed += verdict != record["correct"]
        record["correct"], record["abstained"] = verdict, is_abstention(record["reply"])
    results = results_from_json(data, dataset)
    data["summary"] = [result.summary(categories, PRICE) for result in results]
    _write(path, data)
    return changed


def results_from_json(data: dict, dataset) -> list[StrategyResult]:
    """A stored run back as `StrategyResult`s, for the same tables and plots as a fresh run."""
    results = []
    for summary in data["summary"]:
        result = StrategyResult(summary["strategy"], summary["title"], upkeep_calls=summary["upkeep_calls"],
                                upkeep_input_tokens=summary["upkeep_input_tokens"],
                                upkeep_output_tokens=summary["upkeep_output_tokens"],
                                replayed_turns=summary["replayed_turns"], refused_turns=summary["refused_turns"],
                                seconds=summary["seconds"])  # fmt: skip
        for record in (r for r in data["records"] if r["strategy"] == summary["strategy"]):
            question = dataset.question(record["question"])
            result.records.append(QuestionRecord(
                record["strategy"], record["question"], question.customer, record["category"], question.text,
                record["reply"], record["correct"], record["abstained"], record["evidence_total"],
                record["evidence_found"], record["leaked"], record["input_tokens"], record["output_tokens"],
                record["calls"], record["error"],
            ))  # fmt: skip
        results.append(result)
    return results
