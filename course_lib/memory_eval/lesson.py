"""What notebook 10 shows: the dataset at a glance, one question and its evidence, the Pareto front.

Plain functions that print or draw; the notebook's cells stay a line or two each.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from course_lib.course_versions.pareto_front import pareto_front as course_front
from course_lib.memory_eval.dataset import CATEGORY_TITLES, Customer, Dataset, Question
from course_lib.memory_eval.harness import StrategyResult, request_text
from course_lib.memory_eval.report import number, percent
from course_lib.memory_eval.scoring import evidence_present
from course_lib.memory_eval.strategies import TITLES as TITLES_OF
from course_lib.russian import decimal, plural, plural_form

SESSIONS = ("сессия", "сессии", "сессий")
TURNS = ("ход", "хода", "ходов")
QUESTIONS = ("вопрос", "вопроса", "вопросов")
STRATEGIES = ("стратегия", "стратегии", "стратегий")


def dataset_overview(dataset: Dataset) -> str:
    turns = [customer.turns for customer in dataset.customers]
    sessions = [len(customer.sessions) for customer in dataset.customers]
    counts = Counter(question.category for question in dataset.questions)
    lines = [
        f"Клиентов: {len(dataset.customers)}; сессий у клиента: от {min(sessions)} до {max(sessions)}; "
        f"сообщений клиента: от {min(turns)} до {max(turns)}, всего {number(sum(turns))}.",
        f"Вопросов: {len(dataset.questions)}, из них:",
    ]
    lines += [f"  {CATEGORY_TITLES[c]} — {counts[c]}" for c in dataset.categories]
    return "\n".join(lines)


def timeline(customer: Customer, width: int = 110) -> str:
    """The customer's sessions, with every turn that some question uses as evidence."""
    evidence = {(item.session, item.turn) for q in customer.questions for item in q.evidence}
    lines = [f"Клиент {customer.id} ({customer.name}): {plural(len(customer.sessions), SESSIONS)}, "
             f"{plural(customer.turns, TURNS)} клиента"]  # fmt: skip
    for index, session in enumerate(customer.sessions):
        forget = any(turn.action == "forget" for turn in session.turns)
        lines.append(f"  день {session.day}: {plural(len(session.turns), TURNS)}" + (" — клиент просит стереть данные" if forget else ""))
        for number_, turn in enumerate(session.turns):
            if (index, number_) in evidence:
                text = turn.customer if len(turn.customer) <= width else turn.customer[: width - 1] + "…"
                lines.append(f"    ход {number_ + 1}: {text}")
    return "\n".join(lines)


def describe_question(question: Question) -> str:
    lines = [f"{question.id} — {CATEGORY_TITLES[question.category]}: «{question.text}»"]
    if question.abstain:
        lines.append("  верный ответ: «не знаю» (или уточняющий вопрос)")
    else:
        lines.append("  верный ответ называет: " + "; ".join(" / ".join(group) for group in question.expected))
    if question.rejected:
        lines.append("  в ответе не должно быть: " + "; ".join(group[0] for group in question.rejected))
    for item in question.evidence:
        lines.append(f"  доказательство: сессия {item.session + 1}, ход {item.turn + 1} — {item.value}")
    return "\n".join(lines)


def evidence_in(question: Question, request: Sequence[dict]) -> str:
    """Which of the question's evidence values the request carries (✔) and which it lost (✘)."""
    sent = request_text(request)
    marks = [f"{'✔' if evidence_present(item.forms, sent) else '✘'} {item.value}" for item in question.evidence]
    return ", ".join(marks) if marks else "доказательств нет: ответа в разговоре не было"


class ReadOnlyRecord(dict):
    """A question's record as a run's JSON line holds it, that refuses every change. Notebook 10's
    fill-in examples are made of these: a `category_scores` that writes into the records it sums
    fails its check with a plain message instead of passing (the examples are copies otherwise)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("записи прогона только читают: считайте в своих переменных")

    __setitem__ = __delitem__ = __ior__ = pop = popitem = clear = update = setdefault = _refuse

    def __copy__(self) -> dict:
        return dict(self)  # a copy is the student's own: it may change

    def __deepcopy__(self, memo: dict) -> ReadOnlyRecord:
        return self  # nothing can change it, so the example's copy may be the record itself


def example_record(category: str, correct: bool, found: int = 0, total: int = 0, *,
                   abstained: bool = False) -> ReadOnlyRecord:
    """A record for notebook 10's fill-in examples: the fields `category_scores` reads, with the
    names of a run's JSON (`found` and `total` are `evidence_found` and `evidence_total`)."""
    return ReadOnlyRecord(category=category, correct=correct, abstained=abstained,
                          evidence_total=total, evidence_found=found)


@dataclass(frozen=True)
class Point:
    name: str
    title: str
    tokens: float
    accuracy: float


def points(results: Sequence[StrategyResult]) -> list[Point]:
    """Each strategy as (input tokens per question, memory's own share included; answer accuracy)."""
    return [Point(r.name, r.title, r.total_input_per_question, r.accuracy() or 0.0) for r in results]


# The front is found by the exercise `pareto_front` (exercises/pareto_front.py): a function of plain
# points, {"name", "accuracy", "tokens"} -> the names on the front, cheapest first, ties by name.
# The course's version is the default; notebook 10 passes `front=your_code("pareto_front")`, so
# the table, the plot and «Ваша стратегия обгоняет» run on the student's function once it passes.
Front = Callable[[list[dict]], list[str]]


def as_dicts(all_points: Sequence[Point]) -> list[dict]:
    """The points as the exercise takes them."""
    return [{"name": p.name, "accuracy": p.accuracy, "tokens": p.tokens} for p in all_points]


def pareto_front(all_points: Sequence[Point], front: Front = course_front) -> list[Point]:
    """The points no other point dominates, cheapest first (ties by name), as `front` finds them."""
    by_name = {p.name: p for p in all_points}
    return [by_name[name] for name in front(as_dicts(all_points))]


def beaten_by(all_points: Sequence[Point], name: str, front: Front = course_front) -> list[Point]:
    """The strategies the named one dominates: in a pair with it, it alone is on the front."""
    mine = next(p for p in all_points if p.name == name)
    return [p for p in all_points if p is not mine and front(as_dicts([mine, p])) == [mine.name]]


def _label_offsets(all_points: Sequence[Point]) -> list[tuple[float, float]]:
    """Where each point's label goes (points from its dot): labels of points that sit almost on top of
    each other (a tenth of a decade of tokens, four points of accuracy) are stacked downwards instead
    of printed over one another."""
    placed: list[Point] = []
    offsets = []
    for p in all_points:
        near = sum(1 for q in placed if abs(math.log10(max(p.tokens, 1) / max(q.tokens, 1))) < 0.1
                   and abs(p.accuracy - q.accuracy) < 0.04)  # fmt: skip
        offsets.append((6, 4 - 11 * near))
        placed.append(p)
    return offsets


def front_names(all_points: Sequence[Point]) -> Callable[[list[str]], str]:
    """How notebook 10 shows a front the exercise returned: the strategies' titles in its order."""
    titles = {p.name: p.title for p in all_points}

    def describe(names: list[str]) -> str:
        if not names:
            return "пустой фронт"
        shown = ", ".join(titles[name] if isinstance(name, str) and name in titles else repr(name) for name in names)
        return f"на фронте {plural(len(names), STRATEGIES)}: {shown}"

    return describe


def plot_pareto(all_points: Sequence[Point], *, highlight: str | None = None, title: str = "",
                front: Front = course_front) -> None:
    """Accuracy against tokens, the front joined by a line, shown once in the notebook.

    `plt.show()` hands the figure to the notebook's backend and closes it; a figure left
    open is shown again by the backend's own end-of-cell hook (twice under some kernels).
    """
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8.5, 5))
    on_front = pareto_front(all_points, front)
    axes.plot([p.tokens for p in on_front], [p.accuracy * 100 for p in on_front], color="#999", linestyle="--",
              linewidth=1, zorder=1, label="фронт Парето")  # fmt: skip
    for p, offset in zip(all_points, _label_offsets(all_points)):
        special = p.name == highlight
        axes.scatter(p.tokens, p.accuracy * 100, s=90 if special else 45, zorder=2,
                     color="#c0392b" if special else ("#2e86c1" if p in on_front else "#7f8c8d"))  # fmt: skip
        axes.annotate(p.title, (p.tokens, p.accuracy * 100), textcoords="offset points", xytext=offset, fontsize=8,
                      fontweight="bold" if special else "normal")  # fmt: skip
    axes.set_xscale("log")
    axes.set_xlabel("входных токенов на вопрос (вместе с расходами памяти), логарифмическая шкала")
    axes.set_ylabel("верных ответов, %")
    axes.set_ylim(-5, 105)
    axes.set_title(title)
    axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    plt.show()


def front_table(all_points: Sequence[Point], front: Front = course_front) -> str:
    on_front = {p.name for p in pareto_front(all_points, front)}
    rows = sorted(all_points, key=lambda p: p.tokens)
    return "\n".join(
        f"{'●' if p.name in on_front else '○'} {p.title:<30} {percent(p.accuracy):>6}  {number(p.tokens):>7} "
        + plural_form(round(p.tokens), ("токен", "токена", "токенов"))
        for p in rows
    )


RUNS_DIR = Path(__file__).resolve().parent.parent / "data" / "memory_eval_runs"


@dataclass(frozen=True)
class StoredRun:
    """A run kept in the course (`course_lib/data/memory_eval_runs/<name>.json`)."""

    name: str
    data: dict

    def record(self, strategy: str, question_id: str) -> dict:
        return self._index[(strategy, question_id)]

    @cached_property
    def _index(self) -> dict:
        return {(r["strategy"], r["question"]): r for r in self.data["records"]}

    @property
    def strategies(self) -> list[str]:
        return [summary["strategy"] for summary in self.data["summary"]]


def stored_run(name: str) -> StoredRun:
    from course_lib.memory_eval.report import read_json

    return StoredRun(name, read_json(RUNS_DIR / f"{name}.json"))


def describe_run(run: StoredRun) -> str:
    meta = run.data["meta"]
    lines = [f"Модель: {meta.get('model_name', meta.get('model'))}"]
    for key, label in (("server", "сервер"), ("model_file", "файл модели"), ("n_ctx", "контекст сервера, токенов"),
                       ("temperature", "температура"), ("max_output_tokens", "предел ответа, токенов"),
                       ("summary_prompt", "промпт сводки"), ("machine", "машина"),
                       ("date", "дата прогона")):  # fmt: skip
        if key in meta:
            value = meta[key]  # a number in a Russian line: a decimal comma (temperature 0)
            lines.append(f"  {label}: {decimal(value, None) if isinstance(value, float) else value}")
    lines.append(f"  вопросов: {meta['questions']} (первые в наборе, {plural(meta['customers'], ('клиент', 'клиента', 'клиентов'))}); "
                 f"стратегии: {', '.join(run.strategies)}; бюджет окна: {meta['budget']}")
    return "\n".join(lines)


def same_questions(results: Sequence[StrategyResult], like: Sequence[StrategyResult]) -> list[StrategyResult]:
    """`results` cut to the strategies and questions of `like` (to compare two runs fairly)."""
    asked = {record.question_id for result in like for record in result.records}
    names = [result.name for result in like]
    cut = []
    for result in results:
        if result.name not in names:
            continue
        kept = [record for record in result.records if record.question_id in asked]
        share = len(kept) / max(1, result.questions)
        cut.append(StrategyResult(result.name, result.title, kept, round(result.upkeep_calls * share),
                                  round(result.upkeep_input_tokens * share), round(result.upkeep_output_tokens * share),
                                  result.replayed_turns, 0, result.seconds * share))  # fmt: skip
    return sorted(cut, key=lambda r: names.index(r.name))


def _failure_text(found: int, reply: str, question: Question) -> str:
    lines = [describe_question(question)]
    if question.evidence:
        lines.append(f"  в запросе доказательств: {found} из {len(question.evidence)}")
    lines.append(f"  ответ модели: {reply}")
    return "\n".join(lines)


def failure(run: StoredRun, dataset: Dataset, strategy: str, category: str, *, confident: bool = False) -> str:
    """The first wrong answer of `strategy` on a question of `category` in a stored run; with
    `confident`, the first one that names a value instead of declining."""
    for record in run.data["records"]:
        if record["strategy"] == strategy and record["category"] == category and not record["correct"] \
                and not (confident and record["abstained"]):
            question = dataset.question(record["question"])
            return f"{TITLES_OF.get(strategy, strategy)}\n" + _failure_text(record["evidence_found"], record["reply"], question)
    return f"{TITLES_OF.get(strategy, strategy)}: на вопросах вида «{CATEGORY_TITLES[category]}» ошибок нет."


def failure_of(result: StrategyResult, dataset: Dataset, category: str) -> str:
    for record in result.of(category):
        if not record.correct:
            return f"{result.title}\n" + _failure_text(record.evidence_found, record.reply, dataset.question(record.question_id))
    return f"{result.title}: на вопросах вида «{CATEGORY_TITLES[category]}» ошибок нет."
