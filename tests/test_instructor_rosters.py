"""Rosters as Russian instructors export them, ambiguous keys, Moodle's maximum, Excel's grades.csv.

Everything is run as an instructor would: real files in cp1251 / UTF-8 with a BOM, `;` and tabs,
Russian Moodle and Canvas headers, a class sheet re-saved by a Russian Excel, then `grade` or
`export`; the assertions are on the files written and the exit codes.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from grader import cli, export
from grader.roster import RosterError, match, read_roster

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox", "--exercise", "commit_turn"]
STUDENTS = [("Иван", "Петров", "ipetrov"), ("Анна", "Смирнова", "asmirnova"), ("Олег", "Ёлкин", "oelkin")]


def _write(path: Path, rows: list[list[str]], encoding: str, delimiter: str, bom: bool = False) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    text = buffer.getvalue()
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode(encoding))
    return path


MOODLE_RU = ["Имя", "Фамилия", "Индивидуальный номер", "Учреждение", "Отдел", "Адрес электронной почты"]


def _moodle_rows():
    return [MOODLE_RU] + [
        [first, last, f"10{n}", "МГУ", "ВМК", f"{login}@uni.ru"]
        for n, (first, last, login) in enumerate(STUDENTS, start=1)
    ]


@pytest.mark.parametrize(
    "encoding,delimiter,bom",
    [("cp1251", ";", False), ("utf-8", ";", True), ("utf-8", "\t", False), ("utf-8", ",", True),
     ("cp1251", ",", False)],  # fmt: skip
)
def test_russian_moodle_roster_in_any_encoding_and_delimiter(tmp_path, encoding, delimiter, bom):
    path = _write(tmp_path / "roster.csv", _moodle_rows(), encoding, delimiter, bom)
    roster = read_roster(path)
    assert [(s.get("first"), s.get("last"), s.get("email")) for s in roster.students] == [
        (first, last, f"{login}@uni.ru") for first, last, login in STUDENTS
    ]
    matched = match(roster, [(login, login) for _, _, login in STUDENTS])
    assert matched.student_of == {"ipetrov": 0, "asmirnova": 1, "oelkin": 2}
    assert not matched.unmatched and not matched.ambiguous


def test_russian_canvas_headers_and_points_possible_row(tmp_path):
    rows = [["Студент", "ID", "Идентификатор пользователя SIS", "Идентификатор входа SIS", "Раздел", "ДЗ (7)"],
            ["Возможные баллы", "", "", "", "", "120"],
            ["Петров, Иван", "501", "SIS1", "ipetrov", "Группа 1", ""]]  # fmt: skip
    roster = read_roster(_write(tmp_path / "canvas.csv", rows, "utf-8", ",", bom=True))
    assert len(roster.students) == 1
    student = roster.students[0]
    assert (student.get("name"), student.get("sis_login_id"), student.get("section")) == (
        "Петров, Иван", "ipetrov", "Группа 1")  # fmt: skip


def test_canvas_download_files_match_by_the_canvas_id_then_the_login(tmp_path):
    # issue 31: «egorovpavel_30013_900001_handin.zip» landed in «Студенты без работы».
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section"],
            ["Points Possible", "", "", "", ""],
            ["Егоров, Павел", "30013", "", "p.egorov", "1"],
            ["Иванова, Анна", "30014", "", "ivanova_a", "1"],
            ["Смирнов, Олег", "30015", "", "osmirnov", "1"]]  # fmt: skip
    roster = read_roster(_write(tmp_path / "canvas.csv", rows, "utf-8", ","))
    downloads = [
        ("egorovpavel_30013_900001_handin", "downloads/egorovpavel_30013_900001_handin.zip"),
        ("ivanova_a_late_30014_900002_handin", "downloads/ivanova_a_late_30014_900002_handin.zip"),
        ("osmirnov_99999_900003_handin", "downloads/osmirnov_99999_900003_handin.zip"),  # ID unknown: the login
    ]
    matched = match(roster, downloads)
    assert matched.student_of == {downloads[0][0]: 0, downloads[1][0]: 1, downloads[2][0]: 2}
    assert matched.unmatched == [] and matched.ambiguous == []


def test_a_canvas_download_folder_passed_whole_is_refused(tmp_path):
    from grader import cli

    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "egorovpavel_30013_900001_handin.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    problem = cli.check_paths([folder])
    assert problem and "выгрузки Canvas" in problem and '/*.zip' in problem
    assert cli.check_paths([folder / "egorovpavel_30013_900001_handin.zip"]) is None


def test_russian_names_match_in_any_order_and_without_the_patronymic(tmp_path):
    # issue 31: «Ольга Дмитриевна Новикова_…» did not match «Новикова Ольга Дмитриевна» (ФИО).
    rows = [["ФИО", "Адрес электронной почты"],
            ["Новикова Ольга Дмитриевна", "on@uni.ru"],
            ["Волкова Мария Игоревна", "mv@uni.ru"],
            ["Иванов Иван Петрович", "ip@uni.ru"],
            ["Иванов Иван Сергеевич", "is@uni.ru"]]  # fmt: skip
    roster = read_roster(_write(tmp_path / "fio.csv", rows, "cp1251", ";"))
    folders = ["Ольга Дмитриевна Новикова_1001_assignsubmission_file_", "Волкова Мария_1002_assignsubmission_file_",
               "Иван Иванов_1003_assignsubmission_file_"]  # fmt: skip
    matched = match(roster, [(f"s{n}", folder) for n, folder in enumerate(folders)])
    assert matched.student_of == {"s0": 0, "s1": 1}
    assert any(item.startswith("s2 →") and "Петрович" in item and "Сергеевич" in item for item in matched.ambiguous)


def test_moodle_folder_names_match_by_the_students_name(tmp_path):
    roster = read_roster(_write(tmp_path / "r.csv", _moodle_rows(), "cp1251", ";"))
    folder = "Олег Елкин_1234567_assignsubmission_file_"  # ё/е and case do not matter
    matched = match(roster, [("Олег_Елкин-1a2b3c4d", folder)])
    assert matched.student_of == {"Олег_Елкин-1a2b3c4d": 2}


def test_exact_identifiers_win_and_ambiguity_is_reported_never_guessed(tmp_path):
    # Анна's login "petrov" is Иван's e-mail local part: the submission "petrov" is Анна's.
    rows = [["First name", "Last name", "Username", "Email address"],
            ["Иван", "Петров", "ivan1", "petrov@uni.ru"],
            ["Анна", "Петрова", "petrov", "anna@uni.ru"],
            ["Пётр", "Сидоров", "ps1", "sid@uni.ru"],
            ["Павел", "Сидоров", "ps2", "sid@mail.ru"]]  # fmt: skip
    roster = read_roster(_write(tmp_path / "r.csv", rows, "utf-8", ","))
    matched = match(roster, [("petrov", "petrov"), ("ivan1", "ivan1"), ("sid", "sid")])
    assert matched.student_of == {"petrov": 1, "ivan1": 0}  # the login's owner, not Иван
    assert any(item.startswith("sid →") and "ps1" in item and "ps2" in item for item in matched.ambiguous)
    # "anna" (weak: e-mail local part) and "petrov" (exact: login) are both Анна's: reported, no grade.
    matched = match(roster, [("petrov", "petrov"), ("anna", "anna.zip")])
    assert matched.student_of == {}
    assert any("Анна" in item and "petrov" in item and "anna" in item for item in matched.duplicates)


@pytest.mark.parametrize(
    "content,encoding,expected",
    [
        ("Фамилия;Имя;Группа\r\nПетров;Иван;1\r\n", "cp1251", "строка 1"),  # no identifier column
        ("Email address,Name\r\na@x.ru,A\r\nb@x.ru,B,extra\r\n", "utf-8", "строка 3, столбец 3"),
        ("Email address;Имя\r\n;Иван\r\n", "utf-8", "строка 2, столбец 1"),  # a student with no key
        ("Email address\r\n", "utf-8", "нет ни одного студента"),
    ],
)
def test_rosters_that_cannot_be_understood_name_file_line_and_column(tmp_path, content, encoding, expected):
    path = tmp_path / "список.csv"
    path.write_bytes(content.encode(encoding))
    with pytest.raises(RosterError) as caught:
        read_roster(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


def test_a_file_that_is_not_text_is_refused_with_a_position(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"Email address\r\na@x.ru\x00\r\n")
    with pytest.raises(RosterError, match="строка 2"):
        read_roster(path)


@pytest.fixture()
def class_folder(tmp_path):
    subs = tmp_path / "subs"
    for n, (_, _, login) in enumerate(STUDENTS):
        (subs / login).mkdir(parents=True)
        source = "exercises" if n == 2 else "solutions"
        shutil.copyfile(ROOT / source / "commit_turn.py", subs / login / "commit_turn.py")
    return subs


def _grade(subs: Path, out: Path, *extra: str) -> int:
    return cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET, *extra])


def test_a_bad_roster_stops_grade_before_anything_is_graded(class_folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert _grade(class_folder, out) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    bad = tmp_path / "bad.csv"
    bad.write_bytes("Фамилия;Имя\r\nПетров;Иван\r\n".encode("cp1251"))
    capsys.readouterr()
    assert _grade(class_folder, out, "--roster", str(bad), "--lms", "moodle") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(bad) in err and "строка 1" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_cp1251_semicolon_roster_grades_every_student_and_scales_for_moodle(class_folder, tmp_path, capsys):
    roster = _write(tmp_path / "moodle.csv", _moodle_rows(), "cp1251", ";")
    out = tmp_path / "out"
    assert _grade(class_folder, out, "--roster", str(roster), "--lms", "moodle") == 0
    err = capsys.readouterr().err
    with open(out / "gradebook-moodle.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:4] == ["First name", "Last name", "ID number", "Email address"]
    assert [row[4] for row in rows[1:]] == ["100.00", "100.00", "0.00"]  # Moodle's 0…100 by default
    assert "Студенты без работы" not in err and "?" not in err and "балл × 100 / 10" in err
    # The points as they are, for a site whose administrator allowed them.
    (out / ".state" / "lms" / "moodle.json").unlink()
    code = export.main([str(out), "--lms", "moodle", "--roster", str(roster), "--scale", "raw"])
    assert code == 0
    with open(out / "gradebook-moodle.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert [row[4] for row in rows[1:]] == ["10.00", "10.00", "0.00"]
    assert "максимум 10" in capsys.readouterr().err


def test_moodle_export_is_on_0_100_and_never_wipes_a_grade(tmp_path, capsys):
    # issue 31: Moodle's CSV import refuses any grade above 100 (or the site's gradepointmax with
    # unlimitedgrades); the item's own maximum is not consulted. An empty cell wipes a hand grade.
    out = tmp_path / "out"
    out.mkdir()
    from course_lib.checking.catalog import EXERCISES

    header = "submission,status,score,max_score," + ",".join(exercise.name for exercise in EXERCISES)
    total = 10 * len(EXERCISES)  # the course's maximum: every exercise is worth 10
    (out / "grades.csv").write_text(header + f",details,source\nipetrov,ok,118.50,{total}.00" + ",10.00" * len(EXERCISES)
                                    + ",,ipetrov\n", encoding="utf-8")  # fmt: skip
    roster = _write(tmp_path / "r.csv", _moodle_rows(), "utf-8", ",")
    assert export.main([str(out), "--lms", "moodle", "--roster", str(roster)]) == 0
    err = capsys.readouterr().err
    rows = list(csv.reader((out / "gradebook-moodle.csv").open(encoding="utf-8")))
    assert [row[4] for row in rows[1:]] == [f"{118.5 * 100 / total:.2f}"]  # only the student with a grade
    assert f"шкале 0…100 (балл × 100 / {total})" in err and "gradevaluetoobig" not in err
    assert "в файл не вошли" in err and "Анна Смирнова" in err and "--keep-missing" in err
    assert export.main([str(out), "--lms", "moodle", "--roster", str(roster), "--keep-missing"]) == 0
    rows = list(csv.reader((out / "gradebook-moodle.csv").open(encoding="utf-8")))
    assert len(rows) == 1 + len(_moodle_rows()) - 1 and sorted(row[4] for row in rows[1:])[0] == ""
    capsys.readouterr()
    assert export.main([str(out), "--lms", "moodle", "--roster", str(roster), "--scale", "raw"]) == 0
    err = capsys.readouterr().err
    rows = list(csv.reader((out / "gradebook-moodle.csv").open(encoding="utf-8")))
    assert rows[1][4] == "118.50"
    assert "gradevaluetoobig" in err and "unlimitedgrades" in err and "gradepointmax" in err


def _excel_resave(path: Path) -> None:
    """What a Russian Excel does to grades.csv: `;`, cp1251, decimal commas, CRLF."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    body = [rows[0]] + [[cell.replace(".", ",") if cell[:1].isdigit() else cell for cell in row] for row in rows[1:]]
    _write(path, body, "cp1251", ";")


def test_excel_resaved_grades_csv_keeps_every_row_on_a_regrade(class_folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert _grade(class_folder, out) == 0
    _excel_resave(out / "grades.csv")
    capsys.readouterr()
    assert cli.main([str(class_folder / "oelkin"), "--out", str(out), *QUIET]) == 0
    err = capsys.readouterr().err
    assert "сохранено 2" in err and "для Excel" in err
    data = (out / "grades.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")  # stays Excel-friendly: UTF-8 with a BOM and `;`
    rows = list(csv.reader(data.decode("utf-8-sig").splitlines(), delimiter=";"))
    assert [row[0] for row in rows[1:]] == ["asmirnova", "ipetrov", "oelkin"]
    assert [row[2] for row in rows[1:]] == ["10,00", "10,00", "0,00"]


def test_excel_general_number_format_is_read_back_too(class_folder, tmp_path, capsys):
    """Excel's "General" format writes 10.00 as 10 and 7.50 as 7,5: still every row on a regrade."""
    out = tmp_path / "out"
    assert _grade(class_folder, out) == 0
    path = out / "grades.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))

    def general(cell: str) -> str:
        try:
            return f"{float(cell):g}".replace(".", ",")
        except ValueError:
            return cell

    _write(path, [rows[0]] + [[general(cell) for cell in row] for row in rows[1:]], "cp1251", ";")
    capsys.readouterr()
    assert cli.main([str(class_folder / "oelkin"), "--out", str(out), *QUIET]) == 0
    assert "сохранено 2" in capsys.readouterr().err
    data = (out / "grades.csv").read_bytes().decode("utf-8-sig")
    rows = list(csv.reader(data.splitlines(), delimiter=";"))
    assert [row[0] for row in rows[1:]] == ["asmirnova", "ipetrov", "oelkin"]
    assert [row[2] for row in rows[1:]] == ["10,00", "10,00", "0,00"]


def test_a_grades_csv_excel_broke_is_refused_and_nothing_changes(class_folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert _grade(class_folder, out) == 0
    sheet = out / "grades.csv"
    text = sheet.read_text(encoding="utf-8").replace("10.00", "10.май", 1)  # Excel's "date"
    sheet.write_bytes(text.encode("cp1251"))
    before = sheet.read_bytes()
    feedback = (out / "oelkin" / "feedback.md").read_bytes()
    capsys.readouterr()
    assert cli.main([str(class_folder / "oelkin"), "--out", str(out), *QUIET]) == 2
    err = capsys.readouterr().err
    assert "10.май" in err and "строка 2" in err and "ничего не изменила" in err
    assert sheet.read_bytes() == before and (out / "oelkin" / "feedback.md").read_bytes() == feedback


def test_excel_flag_writes_utf8_bom_semicolons_and_decimal_commas(class_folder, tmp_path):
    out = tmp_path / "out"
    assert _grade(class_folder, out, "--excel") == 0
    data = (out / "grades.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfsubmission;status;score;max_score;commit_turn;")
    assert ";10,00;10,00;" in data.decode("utf-8-sig")


def test_export_without_regrading_and_no_stale_gradebook(class_folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert _grade(class_folder, out) == 0
    roster = _write(tmp_path / "canvas.csv", [["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]] + [
        [f"{last}, {first}", str(500 + n), f"SIS{n}", login, "1"] for n, (first, last, login) in enumerate(STUDENTS)
    ], "utf-8", ";", bom=True)  # fmt: skip
    assert export.main([str(out), "--lms", "canvas", "--roster", str(roster), "--assignment-id", "7"]) == 0
    book = out / "gradebook-canvas.csv"
    rows = list(csv.reader(book.open(encoding="utf-8")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Упражнения курса (7)"]
    assert {row[3]: row[5] for row in rows[1:]} == {"ipetrov": "10.00", "asmirnova": "10.00", "oelkin": "0.00"}
    # oelkin hands in the solution late: a regrade without --lms rewrites the gradebook too.
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", class_folder / "oelkin" / "commit_turn.py")
    assert cli.main([str(class_folder / "oelkin"), "--out", str(out), *QUIET]) == 0
    rows = list(csv.reader(book.open(encoding="utf-8")))
    assert {row[3]: row[5] for row in rows[1:]}["oelkin"] == "10.00"
    # The roster is gone: the gradebook cannot be refreshed, so it is removed, with a message.
    roster.unlink()
    capsys.readouterr()
    assert cli.main([str(class_folder / "oelkin"), "--out", str(out), *QUIET]) == 0
    assert not book.exists() and "удалён" in capsys.readouterr().err
    assert export.main([str(tmp_path / "nowhere"), "--lms", "canvas", "--roster", str(roster)]) == 2
