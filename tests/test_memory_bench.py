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


def test_notebook_09s_tools_beside_notebook_08s_facts():
    from course_lib.memory_bench import TOOLS, format_side_by_side, grounded

    facts, tools = run_all(("facts", TOOLS))
    assert tools.answered == tools.questions == 8 and tools.leaks == 0
    # The model writes memory only when a message says something new: fewer calls than an
    # extraction after every reply, each of them carrying the whole request.
    assert tools.model_calls < facts.model_calls
    assert facts.model_calls == facts.chat_requests + facts.extraction_calls
    assert facts.invented == tools.invented == 0  # the offline model invents nothing, by its rules
    table = format_side_by_side([facts, tools])
    assert table.splitlines()[0].startswith("память") and "tools" in table and f"{tools.model_calls}" in table
    assert grounded("в комплекте нет кабеля", ["клавиатура пришла без кабеля"])  # a paraphrase
    assert not grounded("Заказ 7719", ["Заказ 7718"]) and not grounded("Ольга", ["Меня зовут Анна"])
