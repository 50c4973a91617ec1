"""The memory benchmark (notebook 10): its data, its honesty, and its command.

The honesty checks are the issue's own: full history recalls every piece of evidence; a window with
no room for history recalls none of it; no strategy ever answers a forgotten question with the
forgotten value; every labelled evidence turn really states the value it is labelled with.
"""

from __future__ import annotations

import json
import pytest

from course_lib.llm.offline.intents import recall_kinds
from course_lib.llm.offline.lexicon import normalize
from course_lib.llm.offline.ledger import read_memory_question
from course_lib.memory_eval import generate
from course_lib.memory_eval.dataset import load_dataset
from course_lib.memory_eval.harness import request_text, run_benchmark
from course_lib.memory_eval.lesson import RUNS_DIR
from course_lib.memory_eval.report import read_json
from course_lib.memory_eval.scoring import evidence_present, normalize_answer
from course_lib.memory_eval.strategies import STRATEGY_NAMES
from course_lib.llm.offline.facts import extract_facts
from course_lib.strategies import OfflineDirectClient
from course_lib.tokenizer import TokenCounter
from tests.helpers import run_course_command

DATASET = load_dataset()


def offline(_name: str) -> OfflineDirectClient:
    return OfflineDirectClient()


def test_the_shipped_file_is_what_the_generator_writes():
    assert generate.DATASET_PATH.read_text(encoding="utf-8") == generate.dump(generate.generate())


def test_size_and_shape():
    assert len(DATASET.customers) >= 40
    for customer in DATASET.customers:
        assert 3 <= len(customer.sessions) <= 8, customer.id
        assert 20 <= customer.turns <= 200, customer.id
    assert len(DATASET.questions) >= 300
    assert {q.category for q in DATASET.questions} == set(generate.CATEGORIES)
    assert len({q.id for q in DATASET.questions}) == len(DATASET.questions)


def test_every_evidence_turn_states_its_value():
    for question in DATASET.questions:
        customer = DATASET.customer(question.customer)
        for item in question.evidence:
            said = normalize_answer(customer.turn(item.session, item.turn).customer)
            assert evidence_present(item.forms, said), (question.id, item)
        answerable = question.category not in ("abstention", "forgotten")
        assert bool(question.expected) == answerable and question.abstain != answerable, question.id
        if answerable:  # the answer's key values are what the evidence states
            values = {item.value for item in question.evidence}
            assert all(values & set(group) for group in question.expected), question.id


def test_a_forgotten_value_was_said_before_the_forget_and_never_after():
    for question in (q for q in DATASET.questions if q.category == "forgotten"):
        customer = DATASET.customer(question.customer)
        turns = [turn for session in customer.sessions for turn in session.turns]
        forget_at = max(i for i, turn in enumerate(turns) if turn.action == "forget")
        for group in question.rejected:
            before = [t for t in turns[:forget_at] if evidence_present(group, normalize_answer(t.customer))]
            after = [t for t in turns[forget_at + 1 :] if evidence_present(group, normalize_answer(t.customer))]
            assert before and not after, (question.id, group)


def test_support_lines_never_state_a_value():
    # The customer's words are the only evidence: a support line that repeated a phone would be another.
    for customer in DATASET.customers:
        values = {v for q in customer.questions for g in (*q.expected, *q.rejected) for v in g}
        for session in customer.sessions:
            for turn in session.turns:
                said = normalize_answer(turn.support)
                assert not any(evidence_present([v], said) for v in values), (customer.id, turn.support)


def test_the_offline_model_reads_every_question():
    for question in DATASET.questions:
        understood = read_memory_question(question.text) or recall_kinds(normalize(question.text), extract_facts(question.text))
        assert understood, question.text


@pytest.fixture(scope="module")
def full_run():
    """Every strategy on every question, as `python -m course_lib bench memory-eval` runs it."""
    return run_benchmark(DATASET, STRATEGY_NAMES, offline)


def test_full_history_recalls_all_evidence_and_answers_everything(full_run):
    result = full_run.result("full")
    assert result.evidence_recall() == 1.0
    assert result.accuracy() == 1.0
    assert result.errors == 0


def test_a_window_that_fits_everything_recalls_everything():
    run = run_benchmark(DATASET, ["window"], offline, budget=1_000_000, limit=80)
    assert run.result("window").evidence_recall() == 1.0


def test_a_window_with_no_room_for_history_recalls_no_earlier_evidence():
    # The smallest budget that still takes the instruction and a question: not one earlier turn fits.
    counter = TokenCounter()
    from course_lib.chat_service import ChatService
    from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT

    instruction = {"role": "developer", "content": SUPPORT_CHAT_PROMPT.render()}
    budget = max(counter.count_messages([instruction, ChatService.build_user_message(q.text)]) for q in DATASET.questions)
    run = run_benchmark(DATASET, ["window"], offline, budget=budget, limit=120)
    result = run.result("window")
    assert result.errors == 0
    assert sum(record.evidence_found for record in result.records) == 0
    assert result.evidence_recall() == 0.0


def test_no_strategy_answers_with_a_forgotten_value(full_run):
    for result in full_run.results:
        for record in (r for r in result.records if r.category == "forgotten"):
            question = DATASET.question(record.question_id)
            reply = normalize_answer(record.reply)
            assert not any(evidence_present(group, reply) for group in question.rejected), (result.name, record)
            assert not record.leaked, (result.name, record.question_id)
        assert result.of("forgotten"), result.name


def test_the_stored_offline_run_is_what_the_code_gives_now(full_run):
    # Notebook 10 shows the stored run (`course_lib/data/memory_eval_runs/offline.json`); after a change
    # to a strategy, the offline model or the data: bench memory-eval --json <that file>.
    stored = {(r["strategy"], r["question"]): r for r in read_json(RUNS_DIR / "offline.json")["records"]}
    fresh = {(r.strategy, r.question_id): r.as_json() for result in full_run.results for r in result.records}
    assert stored.keys() == fresh.keys()
    changed = [key for key, record in fresh.items() if record != stored[key]]
    assert not changed, f"{len(changed)} answers differ, e.g. {changed[:3]}"
    assert full_run.result("facts").upkeep_calls > 0


@pytest.mark.parametrize("path", sorted(RUNS_DIR.glob("*.json")), ids=lambda path: path.stem)
def test_every_stored_answer_is_judged_by_the_current_rules(path):
    # After a change to score_answer: bench memory-eval --rescore <file> (the replies stay as they were).
    from course_lib.memory_eval.harness import is_abstention
    from course_lib.memory_eval.scoring import score_answer

    for record in read_json(path)["records"]:
        question = DATASET.question(record["question"])
        verdict = record["error"] is None and score_answer(
            record["reply"], [list(g) for g in question.expected], [list(g) for g in question.rejected], question.abstain)
        assert record["correct"] == verdict, (path.name, record["strategy"], record["question"], record["reply"])
        assert record["abstained"] == is_abstention(record["reply"])


def test_records_are_judged_on_what_was_sent(full_run):
    record = full_run.result("full").records[0]
    assert record.evidence_total >= 1 and record.input_tokens > 0 and record.calls == 1


def test_request_text_includes_tool_call_arguments():
    text = request_text([{"role": "assistant", "content": None,
                          "tool_calls": [{"function": {"name": "x", "arguments": '{"q": "8 912 345-67-89"}'}}]}])
    assert "+79123456789" in text


def test_the_command_writes_every_record(tmp_path, monkeypatch):
    out = tmp_path / "run.json"
    result = run_course_command(monkeypatch, ["bench", "memory-eval", "--limit", "25", "--quiet", "--json", str(out),
                                              "--strategy", "full", "--strategy", "window_summary", "--strategy", "facts"])
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Ответы верны" in output and "факт из одной сессии" in output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["meta"]["backend"] == "offline" and data["meta"]["questions"] == 25
    assert len(data["records"]) == 25 * 3 and {s["strategy"] for s in data["summary"]} == {"full", "window_summary", "facts"}
    assert all(isinstance(r["correct"], bool) for r in data["records"])


def test_the_command_refuses_an_unknown_strategy(monkeypatch):
    result = run_course_command(monkeypatch, ["bench", "memory-eval", "--strategy", "psychic"])
    assert result.returncode == 2 and "psychic" in result.stderr


def test_labels_of_points_on_top_of_each_other_are_stacked():
    from course_lib.memory_eval.lesson import Point, _label_offsets

    points = [Point("a", "A", tokens=958.0, accuracy=1.0), Point("b", "B", tokens=1026.0, accuracy=1.0),
              Point("c", "C", tokens=530.0, accuracy=0.3), Point("d", "D", tokens=1020.0, accuracy=0.99)]
    assert _label_offsets(points) == [(6, 4), (6, -7), (6, 4), (6, -18)]  # c is far from the rest
