"""check()'s report in a notebook: ✔/✘, colour and words, never emoji (no emoji font needed)."""

from __future__ import annotations

import re
from pathlib import Path

from course_lib.exercises import CheckReport, run_check

ROOT = Path(__file__).resolve().parents[1]
EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2705\u274C\u274E\u2B50]")


def test_a_passing_report_is_green_with_marks_and_words():
    report = CheckReport(run_check("split_into_turns", root=ROOT, folder=ROOT / "solutions"), "solutions")
    text, html = str(report), report._repr_html_()
    assert report.passed and repr(report) == text
    assert "✔ пройден: " in text and "✘" not in text and "✔ Все открытые тесты пройдены" in text
    assert 'class="course-check-passed"' in html and "#1e8449" in html and "пройден" in html
    assert not EMOJI.search(text + html)


def test_a_failing_report_is_red_with_marks_and_words(tmp_path):
    (tmp_path / "split_into_turns.py").write_text("def split_into_turns(history):\n    return []\n")
    report = CheckReport(run_check("split_into_turns", root=ROOT, folder=tmp_path), tmp_path.name)
    text, html = str(report), report._repr_html_()
    assert not report.passed
    assert "✘ не пройден: " in text and "✘ Открытые тесты: пройдено" in text
    assert 'class="course-check-failed"' in html and "#c0392b" in html and "не пройден" in html
    assert not EMOJI.search(text + html)


def test_the_stub_report_says_what_to_do():
    text = str(CheckReport(run_check("split_into_turns", root=ROOT)))
    assert "✘ Функция split_into_turns ещё не реализована: замените raise NotImplementedError" in text
    assert "&lt;" not in text  # text/plain is not escaped; only the HTML is
