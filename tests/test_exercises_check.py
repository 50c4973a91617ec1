"""The in-notebook check(): public cases, the grader's runner, a deterministic Russian report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_lib.exercises import EXERCISE_NAMES, HIDDEN_NOTE, check, run_check
from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout

ROOT = Path(__file__).resolve().parents[1]


def _public_names(name: str) -> list[str]:
    """The exercise's public case names, in order (the case files change; the tests follow them)."""
    path = CourseLayout(ROOT).public_cases_file(BY_NAME[name])
    return [case["name"] for case in json.loads(path.read_text(encoding="utf-8"))["cases"]]


def _public_count(name: str) -> int:
    return len(_public_names(name))


def test_stub_report_is_exact(capsys, monkeypatch):
    monkeypatch.chdir(ROOT / "notebooks")  # where a notebook's kernel runs
    check("commit_turn")
    assert capsys.readouterr().out == (
        "Упражнение commit_turn — «Сохранение завершённого хода» (exercises/commit_turn.py)\n"
        "✘ Функция commit_turn ещё не реализована: замените raise NotImplementedError "
        "своим решением.\n"
        f"✘ Открытые тесты: пройдено 0 из {_public_count('commit_turn')}.\n"
        f"{HIDDEN_NOTE}\n"
    )


def test_class_stub_report(capsys):
    check("SessionHistory", root=ROOT)
    assert "✘ Класс SessionHistory ещё не реализован" in capsys.readouterr().out


def test_reference_passes_every_public_case(capsys):
    check("rolling_compress", root=ROOT, folder=ROOT / "solutions")
    names = _public_names("rolling_compress")
    assert capsys.readouterr().out == (
        "Упражнение rolling_compress — «Скользящая сводка с K свежими сообщениями» "
        "(solutions/rolling_compress.py)\n"
        + "".join(f"✔ пройден: {name}\n" for name in names)
        + f"✔ Все открытые тесты пройдены: {len(names)} из {len(names)}.\n"
        + f"{HIDDEN_NOTE}\n"
    )


def test_failures_say_why_and_output_is_deterministic(tmp_path, capsys):
    (tmp_path / "trim_by_message_count.py").write_text(
        "def trim_by_message_count(messages, max_messages):\n"
        "    return messages[:1] + messages[-max_messages:]\n",
        encoding="utf-8",
    )
    check("trim_by_message_count", root=ROOT, folder=tmp_path)
    first = capsys.readouterr().out
    check("trim_by_message_count", root=ROOT, folder=tmp_path)
    assert capsys.readouterr().out == first
    assert "✔ пройден: всё помещается" not in first  # it returns a list with the system prompt twice
    assert "✘ не пройден: пример из условия — неверный результат" in first
    assert "результат[1]['role']: ожидалось 'user', получено 'assistant'" in first
    assert "✘ не пройден: отрицательный max_messages — ValueError — ожидалось исключение" in first
    assert first.rstrip().endswith(HIDDEN_NOTE)


def test_syntax_errors_and_missing_files(tmp_path, capsys):
    (tmp_path / "split_into_turns.py").write_text("def split_into_turns(history:\n", encoding="utf-8")
    check("split_into_turns", root=ROOT, folder=tmp_path)
    out = capsys.readouterr().out
    assert "✘ Синтаксическая ошибка в файле:" in out and "(строка 1 вашего файла)" in out
    assert "(строка 1 вашего файла) (строка 1)" not in out  # the line is named once
    check("select_recent_turns", root=ROOT, folder=tmp_path)
    assert "нет файла select_recent_turns.py" in capsys.readouterr().out


def test_run_check_returns_the_results():
    result = run_check("build_summary_source", root=ROOT, folder=ROOT / "solutions")
    assert result.status == "ok" and result.passed == len(result.cases) == _public_count("build_summary_source")
    assert {case.case.visibility for case in result.cases} == {"public"}


def test_course_root_is_found_by_walking_up(tmp_path):
    from course_lib.checking.catalog import find_course_root

    assert find_course_root(ROOT / "notebooks") == ROOT
    assert find_course_root(ROOT / "exercises" / "cases") == ROOT
    bundle = tmp_path / "bundle"
    (bundle / "exercises").mkdir(parents=True)
    (bundle / "course_lib").mkdir()
    (bundle / "notebooks").mkdir()
    assert find_course_root(bundle / "notebooks") == bundle.resolve()
    assert find_course_root(tmp_path) == ROOT  # nothing above: the installed course_lib's own


def test_names():
    assert EXERCISE_NAMES == tuple(exercise.name for exercise in EXERCISES)
    with pytest.raises(KeyError):
        run_check("no_such_exercise", root=ROOT)


def test_the_students_line_stands_under_the_case_that_names_it(tmp_path, capsys):
    # A wrong refusal (line 6 of the file) fails one case; the cases after it pass. The quoted line
    # belongs to the failing case, not to the last one printed.
    source = (ROOT / "solutions" / "check_reply.py").read_text(encoding="utf-8")
    wrong = source.replace('        raise CutOffReply("Ответ остановлен из-за ограничения длины.")\n',
                           '        raise EmptyReply("не та причина")\n')
    assert wrong != source
    (tmp_path / "check_reply.py").write_text(wrong, encoding="utf-8")
    check("check_reply", root=ROOT, folder=tmp_path)
    out = capsys.readouterr().out.splitlines()
    quoted = next(i for i, line in enumerate(out) if line.strip().startswith("строка ") and "не та причина" in line)
    named = [i for i, line in enumerate(out) if "вашего файла)" in line]
    assert named and quoted == named[0] + 1
