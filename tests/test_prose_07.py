"""Notebook 07's prose and structure: sessions outlive the process — a real kernel restart finds the
file, the checks for CI sit in hidden cells, the PostgreSQL section runs or prints its commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from notebook_text import all_output_text, cell_by_id, hidden_check_cells, index_of, markdown_text, stream_text

ROOT = Path(__file__).resolve().parent.parent
STEM = "07_persistence_and_memory"
NOTEBOOK = ROOT / "notebooks" / f"{STEM}.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / f"{STEM}.json"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


cell, index = cell_by_id, index_of


def test_outputs_hold_no_temporary_or_absolute_paths(cells):
    text = all_output_text(cells)
    assert "/tmp" not in text and str(ROOT) not in text
    assert ".course-data/notebook-07/sessions.sqlite3" in stream_text(cell(cells, "nb07-setup"))


# --- issue 19: a real kernel restart finds the session file --------------------------------------------


def test_the_session_file_lives_where_a_kernel_restart_finds_it(cells):
    setup = cell(cells, "nb07-setup").source
    assert 'notebook_data_dir("07")' in setup and "TemporaryDirectory" not in setup
    assert ".course-data/" in (ROOT / ".gitignore").read_text(encoding="utf-8")


def test_the_after_restart_cell_needs_nothing_from_the_kernel(cells):
    prose = cell(cells, "nb07-kernel-md").source
    assert "Kernel → Restart" in prose
    source = cell(cells, "nb07-kernel").source
    for name in ("build_chat_app", "load_settings", "notebook_data_dir", "SQLiteSessionStore"):
        assert re.search(rf"^from \S+ import .*\b{name}\b", source, re.MULTILINE), name
    assert "settings" not in re.sub(r"load_settings", "", source)  # no name from the setup cell
    assert "Сессия case-8041 из файла: сообщений 6" in stream_text(cell(cells, "nb07-kernel"))


def test_the_examples_restart_cleanly_and_the_cleanup_is_optional(cells):
    assert 'store.delete("case-8041")' in cell(cells, "nb07-restart").source
    assert "необязательно" in cell(cells, "nb07-practice").source.lower()
    assert cells[-1].get("id") == "nb07-cleanup" and 'remove_notebook_data("07")' in cells[-1].source
    assert "Необязательно" in cells[-1].source


def test_checks_for_ci_are_hidden_and_guarded_on_a_real_model(cells):
    for code_cell in hidden_check_cells(cells):
        for line in code_cell.source.splitlines():
            if ".text" in line and line.strip().startswith("assert"):
                assert line.startswith("    "), line  # model words only under `if OFFLINE:`


def test_ttl_is_shown_with_the_file_store(cells):
    assert "session_ttl_seconds=3600" in cell(cells, "nb07-ttl").source
    output = stream_text(cell(cells, "nb07-ttl"))
    assert "Пока другой процесс отвечает в busy-case, остались сессии: busy-case, new-case" in output
    assert "закончил ход — остались сессии: new-case" in output


def test_the_ttl_rule_is_the_students_fill_in_and_the_file_store_runs_on_it(cells):
    # Issue 29: which sessions a TTL removes is the student's sessions_to_expire; section 1.6's
    # store expires by it, and until it passes its examples the course's rule runs and says so.
    stub = cell(cells, "nb07-ttl-fill").source
    assert "def sessions_to_expire(" in stub and 'raise NotImplementedError("Заполните правило TTL")' in stub
    check = cell(cells, "nb07-ttl-fill-check").source
    assert check.count("frozenset(") == 5 and check.count("# ") >= 5  # five examples, each says what it catches
    assert "↪ sessions_to_expire: ячейка ещё не заполнена" in stream_text(cell(cells, "nb07-ttl-fill-check"))
    assert cell(cells, "nb07-ttl-course").metadata["jupyter"]["source_hidden"] is True
    assert "SQLiteSessionStore(TTL_FILE, sessions_to_expire=sessions_to_expire)" in cell(cells, "nb07-ttl").source
    order = [index(cells, name) for name in ("nb07-ttl-md", "nb07-ttl-fill", "nb07-ttl-fill-check",
                                             "nb07-ttl-course", "nb07-ttl-demo-md", "nb07-ttl", "nb07-ttl-check")]
    assert order == sorted(order)
    assert "sessions_to_expire" in cell(cells, "nb07-summary").source


# --- issue 23: beyond one machine runs on PostgreSQL or prints the commands ----------------------------


def test_the_postgres_section_runs_two_processes_or_prints_commands(cells):
    # run_demo() runs two processes when COURSE_POSTGRES_URL is set (tests/test_stores_processes.py
    # runs it live); offline it shows the recorded run and the commands.
    source = cell(cells, "nb07-postgres").source
    assert "run_demo()" in source
    output = stream_text(cell(cells, "nb07-postgres"))
    # Issue 30: no turns-per-second table — on two shared cores it was noise (92 → 259 → 58 turns/s for
    # 1/4/8 processes); the prose says why there is none and what SQLite's one writer means instead.
    assert "Замер хранилищ" not in output and "ходов в секунду" not in output
    prose = cell(cells, "nb07-beyond-md").source
    assert "Замеров скорости хранилищ" in prose and "одну транзакцию записи за раз" in prose
    assert "Записанный прогон" in output and "ответ процесса 2" in output and "PostgreSQL" in output
    assert 'python -m course_lib chat --store "$COURSE_POSTGRES_URL" --user anna --session case-8041' in output
    assert "python -m course_lib.postgres.cluster start" in output


# --- quizzes --------------------------------------------------------------------------------------------


def test_quiz_cells_are_hidden_and_use_every_quiz_once(cells):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    used = []
    for code_cell in cells:
        if code_cell.cell_type == "code" and code_cell.source.startswith("show_quiz("):
            match = re.fullmatch(rf'show_quiz\("{STEM}", "([a-z0-9-]+)"\)', code_cell.source.strip())
            assert match, code_cell.source
            assert code_cell.metadata.get("jupyter", {}).get("source_hidden") is True
            used.append(match.group(1))
    assert sorted(used) == sorted(quizzes) and len(used) == len(set(used))


def test_the_store_exercise_is_practised_here_the_memory_ones_moved_to_08(cells):
    from course_lib.checking.catalog import EXERCISES

    assert [exercise.name for exercise in EXERCISES if exercise.notebook == "07"] == ["commit_session", "take_lease"]
    assert {exercise.name for exercise in EXERCISES if exercise.notebook == "08"} == {
        "merge_facts", "select_memories", "build_memory_message", "fts_query"}
    # Issue 29: the version check is the student's; the store and the chat of section 1.4 run on it.
    source = cell(cells, "nb07-commit").source
    assert 'commit_session = your_code("commit_session")' in source and "ExerciseSessionStore(commit_session)" in source
    assert "commit_session.show_mistake(" in source
    assert "store=ExerciseSessionStore(commit_session)" in cell(cells, "nb07-commit-chat").source
    assert "commit_session — версия курса" in stream_text(cell(cells, "nb07-commit-chat"))
    assert 'check("commit_session")' in cell(cells, "nb07-check").source


def test_the_lease_rule_is_the_students_in_both_experiments(cells):
    # Issue 29: section 1.5's stores take every lease with the student's take_lease; the crashed
    # process is a real one, and the client's next message is answered at once, on the student's rule.
    source = cell(cells, "nb07-lease").source
    assert 'take_lease = your_code("take_lease")' in source
    assert source.count("take_lease=take_lease") == 3 and 'crash_holding_lease(SESSIONS, "crash-case")' in source
    output = stream_text(cell(cells, "nb07-lease"))
    assert "Второй процесс ждёт: Сессия race занята другим процессом дольше 0,2 с." in output
    assert "ответил этот процесс" in output and "take_lease — версия курса" in output
    rule = cell(cells, "nb07-lease-rule").source
    assert "if not take_lease.show_mistake(current, second, NOW, LEASE" in rule
    rows = stream_text(cell(cells, "nb07-lease-rule"))
    assert "первый на другой машине (его PID здесь не виден):\n  сессия занята: второй ждёт" in rows
    assert "первый упал посреди хода:\n  отвечает второй (PID 5151), аренда до 1300 с\n" in rows
    assert index(cells, "nb07-commit-chat-check") < index(cells, "nb07-lease-md") < index(cells, "nb07-ttl-md")
    assert "### 1.5. Аренда сессии: напишите сами" in cell(cells, "nb07-lease-md").source
    assert "### 1.6. Время жизни сессий (TTL)" in cell(cells, "nb07-ttl-md").source
    assert 'check("take_lease")' in cell(cells, "nb07-check").source


# --- second read (issue 18): sources cited where the student met them, no name the notebook lacks ------


def test_the_article_is_cited_as_the_one_from_notebook_04(cells):
    text = markdown_text(cells)
    assert "с которой начинался курс" not in text  # the article is met in 04, the course starts in 00
    assert "из ноутбука 04" in cell(cells, "nb07-title").source


def test_the_setup_prose_names_only_what_the_setup_defines(cells):
    prose, setup = cell(cells, "nb07-setup-md").source, cell(cells, "nb07-setup").source
    assert "offline_client" not in prose or "offline_client" in setup
    for name in ("count_message_tokens", "split_into_turns", "select_recent_turns"):
        assert f"`{name}`" in prose and f'your_code("{name}")' in setup
