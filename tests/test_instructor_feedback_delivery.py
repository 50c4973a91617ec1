"""Feedback back to students through the LMS (issue 31): the Moodle zip is read the way Moodle's
own importer reads it (mod/assign/feedback/file/importziplib.php), the Canvas folder has one file
per matched student, and both follow a regrade."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from grader import cli, export

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox", "--exercise", "commit_turn"]
MOODLE = {"Иван Петров_1234567_assignsubmission_file_": "solutions", "Анна Смирнова_7654321_assignsubmission_file_": "exercises"}


def _moodle_import(names: list[str], participants: set[int]) -> dict[int, str]:
    """{participant id: file name} as Moodle's is_valid_filename_for_import finds them."""
    found = {}
    for full in names:
        parts = full.split("/")
        while parts:
            info = parts.pop(0).split("_", 4)
            if len(info) < 4 or not info[1].isdigit() or int(info[1]) not in participants:
                continue
            assert (info[2], info[3]) == ("assignfeedback", "file")  # a plugin the assignment has
            found[int(info[1])] = "/".join([info[4] if len(info) > 4 else "", *parts]).strip("/")
            break
    return found


def _subs(tmp_path: Path) -> Path:
    subs = tmp_path / "subs"
    for folder, source in MOODLE.items():
        (subs / folder).mkdir(parents=True)
        shutil.copyfile(ROOT / source / "commit_turn.py", subs / folder / "commit_turn.py")
    (subs / "oelkin").mkdir()
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", subs / "oelkin" / "commit_turn.py")
    return subs


def _roster(tmp_path: Path) -> Path:
    roster = tmp_path / "moodle.csv"
    roster.write_text("Имя,Фамилия,Адрес электронной почты\nИван,Петров,ipetrov@uni.ru\n"
                      "Анна,Смирнова,asmirnova@uni.ru\nОлег,Ёлкин,oelkin@uni.ru\n", encoding="utf-8")  # fmt: skip
    return roster


def test_the_moodle_zip_is_what_moodles_importer_places(tmp_path, capsys):
    subs, out = _subs(tmp_path), tmp_path / "out"
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET,
                     "--roster", str(_roster(tmp_path)), "--lms", "moodle"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    with zipfile.ZipFile(out / "feedback-moodle.zip") as archive:
        names = archive.namelist()
        placed = _moodle_import(names, {1234567, 7654321})
        assert placed == {1234567: "feedback.md", 7654321: "feedback.md"}
        contents = {name.split("_")[1]: archive.read(name).decode("utf-8") for name in names}
    graded = {p.name: p for p in out.iterdir() if p.is_dir() and "assignsubmission" in p.name}
    petrov = next(p for name, p in graded.items() if "1234567" in name)
    assert contents["1234567"] == (petrov / "feedback.md").read_text(encoding="utf-8")
    assert "Иван Петров" in contents["1234567"] and "Скрытые тесты" in contents["1234567"]
    # The student graded from a plain folder has no participant id: named, not guessed.
    assert "Upload multiple feedback files in a zip" in err and "oelkin" in err.split("Не в архиве")[1]


def test_after_publication_feedback_and_a_regrade_refresh_the_zip(tmp_path, capsys):
    subs, out = _subs(tmp_path), tmp_path / "out"
    roster = _roster(tmp_path)
    args = [*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET, "--roster", str(roster), "--lms", "moodle"]
    assert cli.main(args) == 0
    assert export.main([str(out), "--lms", "moodle", "--roster", str(roster), "--feedback", "after-publication"]) == 0
    smirnova = next(p for p in out.iterdir() if "7654321" in p.name)
    with zipfile.ZipFile(out / "feedback-moodle.zip") as archive:
        text = archive.read(next(n for n in archive.namelist() if "7654321" in n)).decode("utf-8")
    assert text == (smirnova / "feedback_after_publication.md").read_text(encoding="utf-8")
    # She fixes her file; the regrade rewrites the zip with the remembered settings.
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", subs / "Анна Смирнова_7654321_assignsubmission_file_" / "commit_turn.py")
    assert cli.main([str(subs / "Анна Смирнова_7654321_assignsubmission_file_"), "--out", str(out), *QUIET]) == 0
    with zipfile.ZipFile(out / "feedback-moodle.zip") as archive:
        text = archive.read(next(n for n in archive.namelist() if "7654321" in n)).decode("utf-8")
        assert len(archive.namelist()) == 2
    assert text == (smirnova / "feedback_after_publication.md").read_text(encoding="utf-8") and "Итого: 10 из 10" in text


def test_canvas_gets_one_named_file_per_matched_student(tmp_path, capsys):
    subs = tmp_path / "subs"
    for login, source in (("ipetrov", "solutions"), ("asmirnova", "exercises"), ("stranger", "solutions")):
        (subs / login).mkdir(parents=True)
        shutil.copyfile(ROOT / source / "commit_turn.py", subs / login / "commit_turn.py")
    roster = tmp_path / "canvas.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
                      "\"Петров, Иван\",30013,,ipetrov,A\n\"Смирнова, Анна\",30014,,asmirnova,A\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "out"
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET,
                     "--roster", str(roster), "--lms", "canvas"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    files = sorted(p.name for p in (out / "feedback-canvas").iterdir())
    assert files == ["Петров, Иван_30013_feedback.md", "Смирнова, Анна_30014_feedback.md"]
    assert (out / "feedback-canvas" / files[0]).read_bytes() == (out / "ipetrov" / "feedback.md").read_bytes()
    assert "SpeedGrader" in err and "stranger" in err.split("Без файла отзыва")[1]
