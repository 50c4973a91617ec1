"""`bench memory`: the issue's target holds and the baselines show why memory is needed."""

from course_lib.memory_bench import STRATEGIES, format_runs, run_all


def test_facts_answer_every_cross_session_question_for_at_most_15_percent_more_tokens():
    runs = {run.strategy: run for run in run_all()}
    assert tuple(runs) == STRATEGIES
    none, facts, recall = runs["none"], runs["facts"], runs["facts+recall"]
    assert none.answered == 0 and runs["summary"].answered == 0  # nothing crosses a session
    assert facts.answered == facts.questions == recall.answered == 8
    assert all(run.leaks == 0 for run in runs.values())
    assert facts.tokens_per_request <= none.tokens_per_request * 1.15
    assert recall.tokens_per_request > facts.tokens_per_request  # recall is not free
    assert facts.extraction_calls == facts.chat_requests  # one extraction per reply, in the hot path
    table = format_runs(list(runs.values()))
    assert "8/8" in table and "0/8" in table
