"""What a new instructor's first batch ran into (release → grade → regrade → export, round 3).

Each test is one thing that went wrong on a realistic class folder, run as the instructor runs it
(`grade` / `export` on real files), with assertions on exit codes and the files written:
a truncated zip stopped the whole batch; the unzipped Moodle download itself was graded as one
student; a Canvas export from a Moodle roster wrote rows no LMS could import; a Canvas export next
to a Moodle one left the Moodle gradebook stale after a regrade; a copy of the course's own shipped
version of an exercise earned full points with nothing in grades.csv.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import zipfile
from pathlib import Path

from grader import cli, export

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox", "--exercise", "commit_turn"]


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _moodle_roster(path: Path, logins: list[str]) -> Path:
    lines = ["Имя;Фамилия;Индивидуальный номер;Адрес электронной почты"]
    lines += [f"Имя{n};Фамилия{n};S{n:03d};{login}@uni.ru" for n, login in enumerate(logins)]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp1251"))
    return path


def _solution_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", path / "commit_turn.py")
    return path


def test_a_truncated_zip_is_that_students_status_not_a_stop_for_the_batch(tmp_path, capsys):
    subs = tmp_path / "subs"
    good = _solution_folder(subs / "ivanov")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("exercises/commit_turn.py", (ROOT / "solutions" / "commit_turn.py").read_text())
    (subs / "volkov.zip").write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])  # a cut download
    out = tmp_path / "out"
    assert cli.main([str(good), str(subs / "volkov.zip"), "--out", str(out), *QUIET]) == 0
    rows = {row["submission"]: row for row in _rows(out / "grades.csv")}
    assert rows["ivanov"]["score"] == "10.00"
    assert rows["volkov"]["status"] == "missing" and rows["volkov"]["score"] == "0.00"
    # The reason is in the instructor's details and once at the top of the student's feedback.
    assert "handin: архив работы повреждён" in rows["volkov"]["details"]
    feedback = (out / "volkov" / "feedback.md").read_text(encoding="utf-8")
    head = feedback.split("\n## ", 1)[0]
    assert "⚠️ архив работы повреждён или скачан не полностью" in head and "handin" in head
    assert "BadZipFile" not in feedback
    # Counts read as Russian: «Все открытые тесты пройдены: 5 из 5.», not «(открытые тесты: 5 из 5)».
    public = len(json.loads((ROOT / "exercises" / "cases" / "commit_turn.json").read_text())["cases"])
    good_feedback = (out / "ivanov" / "feedback.md").read_text(encoding="utf-8")
    assert f"Все открытые тесты пройдены: {public} из {public}." in good_feedback
    assert "Пройдено открытых тестов: 0 из" in feedback and "Пройдено: " not in feedback


def test_the_unzipped_moodle_download_itself_is_refused_with_the_right_command(tmp_path, capsys):
    download = tmp_path / "Задание 1"
    _solution_folder(download / "Анна Смирнова_1234567_assignsubmission_file_")
    _solution_folder(download / "Пётр Кузнецов_1234568_assignsubmission_file_")
    out = tmp_path / "out"
    assert cli.main([str(download), "--out", str(out), *QUIET]) == 2
    err = capsys.readouterr().err
    assert "Задание 1" in err and "выгрузки Moodle" in err and '/* --out' in err
    assert not out.exists()
    # One student's folder from that download is graded as usual.
    student = download / "Анна Смирнова_1234567_assignsubmission_file_"
    assert cli.main([str(student), "--out", str(out), *QUIET]) == 0
    # Its feedback is addressed to the student by name, not by the output folder's cleaned name.
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert folder.name.startswith("Анна_Смирнова_1234567_assignsubmission_file_-")
    for name in ("feedback.md", "feedback_after_publication.md"):
        first = (folder / name).read_text(encoding="utf-8").splitlines()[0]
        assert first == "# Результаты проверки: Анна Смирнова"


def test_an_lms_export_needs_a_roster_that_lms_can_match_on(tmp_path, capsys):
    subs = tmp_path / "subs"
    _solution_folder(subs / "ivanov")
    moodle_roster = _moodle_roster(tmp_path / "moodle.csv", ["ivanov"])
    out = tmp_path / "out"
    # grade --lms canvas with a Moodle roster: refused before anything is graded.
    assert cli.main([str(subs / "ivanov"), "--out", str(out), "--roster", str(moodle_roster),
                     "--lms", "canvas", *QUIET]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "Canvas" in err and "SIS Login ID" in err and str(moodle_roster) in err
    assert not out.exists()
    # export --lms canvas from a graded folder: refused, no gradebook of empty identifiers written.
    assert cli.main([str(subs / "ivanov"), "--out", str(out), *QUIET]) == 0
    assert export.main([str(out), "--lms", "canvas", "--roster", str(moodle_roster)]) == 2
    assert not (out / "gradebook-canvas.csv").exists()
    # A Moodle roster with logins only: the gradebook carries the Username column Moodle maps.
    logins = tmp_path / "logins.csv"
    logins.write_text("First name,Last name,Username\nИван,Иванов,ivanov\n", encoding="utf-8")
    assert export.main([str(out), "--lms", "moodle", "--roster", str(logins)]) == 0
    with open(out / "gradebook-moodle.csv", encoding="utf-8", newline="") as handle:
        header, row = list(csv.reader(handle))
    assert header[:5] == ["First name", "Last name", "ID number", "Email address", "Username"]
    assert row[4] == "ivanov" and row[5] == "100.00"  # Moodle: 0…100 by default


def test_a_regrade_rewrites_every_gradebook_in_the_folder(tmp_path, capsys):
    subs = tmp_path / "subs"
    _solution_folder(subs / "ivanov")
    stub = subs / "petrova"
    stub.mkdir()
    shutil.copyfile(ROOT / "exercises" / "commit_turn.py", stub / "commit_turn.py")
    # A student called "gradebook": its state file must not be taken for the export settings.
    _solution_folder(subs / "gradebook")
    logins = ["ivanov", "petrova", "gradebook"]
    moodle_roster = _moodle_roster(tmp_path / "moodle.csv", logins)
    canvas_roster = tmp_path / "canvas.csv"
    canvas_roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n"
        + "".join(f"\"Фамилия{n}, Имя{n}\",{100 + n},SIS{n},{login},1\n" for n, login in enumerate(logins)),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    folders = [str(subs / name) for name in logins]
    assert cli.main([*folders, "--out", str(out), "--roster", str(moodle_roster), "--lms", "moodle",
                     "--scale", "100", *QUIET]) == 0  # fmt: skip
    assert export.main([str(out), "--lms", "canvas", "--roster", str(canvas_roster)]) == 0
    # petrova hands in a fixed file; the regrade names no LMS.
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", stub / "commit_turn.py")
    capsys.readouterr()
    assert cli.main([str(stub), str(subs / "gradebook"), "--out", str(out), *QUIET]) == 0
    err = capsys.readouterr().err
    assert "удалён" not in err
    with open(out / "gradebook-moodle.csv", encoding="utf-8", newline="") as handle:
        moodle = {row[3]: row[4] for row in list(csv.reader(handle))[1:]}
    with open(out / "gradebook-canvas.csv", encoding="utf-8", newline="") as handle:
        canvas = {row[3]: row[5] for row in list(csv.reader(handle))[1:]}
    assert moodle["petrova@uni.ru"] == "100.00"  # still scaled, as remembered
    assert canvas["petrova"] == "10.00"
    assert moodle["gradebook@uni.ru"] == "100.00" and canvas["gradebook"] == "10.00"


def test_a_copy_of_the_course_version_shipped_to_students_is_flagged(tmp_path, capsys):
    subs = tmp_path / "subs"
    copy = subs / "copycat"
    copy.mkdir(parents=True)
    shutil.copyfile(ROOT / "course_lib" / "course_versions" / "commit_turn.py", copy / "commit_turn.py")
    honest = _solution_folder(subs / "honest")
    out = tmp_path / "out"
    assert cli.main([str(copy), str(honest), "--out", str(out), *QUIET]) == 0
    rows = {row["submission"]: row for row in _rows(out / "grades.csv")}
    assert rows["copycat"]["score"] == "10.00"  # it works: the flag is for a human, not a penalty
    assert rows["copycat"]["details"] == "commit_turn: course_version"
    assert rows["honest"]["details"] == ""
    feedback = (out / "copycat" / "feedback_after_publication.md").read_text(encoding="utf-8")
    assert "course_version" not in feedback


def test_a_syntax_error_names_its_line_once(tmp_path, capsys):
    folder = tmp_path / "lebedev"
    folder.mkdir()
    source = (ROOT / "solutions" / "commit_turn.py").read_text(encoding="utf-8")
    (folder / "commit_turn.py").write_text(source.replace("def commit_turn(", "def def commit_turn(", 1))
    line = source.splitlines().index("def commit_turn(") + 1
    out = tmp_path / "out"
    assert cli.main([str(folder), "--out", str(out), *QUIET]) == 0
    feedback = (out / "lebedev" / "feedback.md").read_text(encoding="utf-8")
    assert f"(строка {line} вашего файла)" in feedback
    assert f"вашего файла) (строка {line})" not in feedback
