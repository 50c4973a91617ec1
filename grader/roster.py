"""Class rosters as LMSs export them, and matching submissions to students without guessing.

A roster is a CSV in any encoding and delimiter `table` detects (a Russian Excel's cp1251 and `;`
included), with English or Russian headers of Canvas's gradebook export (`Student, ID, SIS User ID,
SIS Login ID, Section` / «Студент, …») or Moodle's participants or grades export (`First name, Last
name, ID number, Email address` / «Имя, Фамилия, Индивидуальный номер, Адрес электронной почты»),
or a `submission` column naming each student's folder. It is read before any grading: a file that
cannot be understood stops `grade` with exit 2 and a message naming the file, line and column.

Matching a submission (its output name, the folder or zip name, and for Moodle's "download
submissions in folders" layout `Имя Фамилия_1234567_assignsubmission_file_` the student's name; for
Canvas's `login_30013_900001_handin.zip` the Canvas ID, exact, and the login, weak):
1. exact identifiers first — `submission`, ID, SIS User ID, SIS Login ID, ID number, Username and the
   full e-mail; one student matching is the answer, two are reported as ambiguous;
2. only when no exact identifier matches, a Canvas file's login against the roster's identifiers;
3. only then weaker keys — the e-mail's part before "@" and the full name (either order) — and only
   when exactly one student has that key.
So a login that equals another student's e-mail local part goes to the login's owner. Ambiguity
is reported and that grade left empty, never resolved by a guess. Comparison ignores case, `ё`/`е`
and runs of spaces or underscores.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import permutations
from dataclasses import dataclass, field
from pathlib import Path

from grader.table import TableError, read_table, where

# canonical field -> header spellings (compared by `_header_key`)
HEADERS = {
    "submission": ("submission", "работа", "папка"),
    "name": ("student", "full name", "студент", "учащийся", "полное имя", "фио", "имя и фамилия"),
    "first": ("first name", "имя"),
    "last": ("last name", "surname", "фамилия"),
    "canvas_id": ("id", "ид", "идентификатор"),
    "sis_user_id": ("sis user id", "идентификатор пользователя sis", "sis id пользователя"),
    "sis_login_id": (
        "sis login id", "идентификатор входа sis", "идентификатор логина sis", "логин sis",
    ),  # fmt: skip
    "section": ("section", "раздел", "секция", "группа"),
    "id_number": (
        "id number", "idnumber", "индивидуальный номер", "идентификационный номер", "номер id",
    ),  # fmt: skip
    "username": ("username", "login", "логин", "имя пользователя", "имя входа"),
    "email": (
        "email address", "email", "e-mail", "адрес электронной почты", "электронная почта",
        "эл. почта", "почта",
    ),  # fmt: skip
}
STRONG = ("submission", "canvas_id", "sis_user_id", "sis_login_id", "id_number", "username", "email")
SKIPPED_ROWS = ("points possible", "возможные баллы", "возможно баллов")
MOODLE_FOLDER = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assign(?:submission|feedback)_\w*$")
CANVAS_FILE = re.compile(r"^(?P<login>.+?)_(?:late_)?(?P<canvas_id>\d+)_(?P<file_id>\d+)_(?P<file>.+)$")
"""How Canvas's "Download Submissions" names each file: `<login>_<canvas id>_<id>_<file>`, with
`late_` before the Canvas ID for a late one (`egorovpavel_30013_900001_handin.zip`)."""


class RosterError(TableError):
    """The roster cannot be understood (Russian message with file, line and column)."""


PATRONYMIC = re.compile(r"(?:вич|вна|ична|чна|инич|оглы|кызы)$")


def name_orders(name: str) -> set[str]:
    """A person's name in every order a roster or an LMS writes it («Новикова Ольга Дмитриевна»,
    «Ольга Дмитриевна Новикова», «Ольга Новикова»…): its words in any order, and without the
    patronymic (a word ending like «-вна», «-вич»). Only names of two or three words; longer ones as written."""
    words = [w for w in normalized(name).split(" ") if w]
    if not 2 <= len(words) <= 3:
        return {" ".join(words)} if words else set()
    found = {" ".join(order) for order in permutations(words)}
    patronymics = [w for w in words if PATRONYMIC.search(w)]
    if len(words) == 3 and len(patronymics) == 1:
        rest = [w for w in words if w != patronymics[0]]
        found |= {" ".join(order) for order in permutations(rest)}
    return found


def normalized(text: str) -> str:
    text = text.strip().lower().replace("ё", "е")
    return re.sub(r"[\s_]+", " ", text).strip()


def _header_key(text: str) -> str:
    return normalized(text.strip('"\ufeff '))


_ALIASES = {normalized(alias): key for key, aliases in HEADERS.items() for alias in aliases}


@dataclass
class Student:
    line: int
    fields: dict[str, str]

    def get(self, key: str) -> str:
        return self.fields.get(key, "")

    @property
    def display_name(self) -> str:
        name = self.get("name") or " ".join(p for p in (self.get("first"), self.get("last")) if p)
        key = next((self.get(k) for k in ("sis_login_id", "username", "email", "id_number",
                                          "submission", "canvas_id", "sis_user_id") if self.get(k)), "")  # fmt: skip
        return f"{name} ({key})" if name and key else name or key or f"строка {self.line}"

    def strong_keys(self) -> set[str]:
        return {normalized(self.get(k)) for k in STRONG if self.get(k)}

    def weak_keys(self) -> set[str]:
        keys = set()
        email = self.get("email")
        if "@" in email:
            keys.add(normalized(email.split("@", 1)[0]))
        first, last = self.get("first"), self.get("last")
        if first and last:
            keys |= name_orders(f"{first} {last}")
        name = self.get("name")
        if name:
            keys |= name_orders(name.replace(",", " "))
        return keys


@dataclass
class Roster:
    path: Path
    students: list[Student]
    columns: dict[str, str]  # canonical field -> the header as written
    described: str = ""


def read_roster(path: Path) -> Roster:
    """The roster's students; RosterError when it cannot be understood."""
    try:
        table = read_table(path)
    except TableError as error:
        raise RosterError(str(error)) from error
    columns: dict[int, str] = {}
    named: dict[str, str] = {}
    for number, header in enumerate(table.header):
        key = _ALIASES.get(_header_key(header))
        if key and key not in named:
            columns[number] = key
            named[key] = header
    if not any(key in named for key in STRONG):
        found = ", ".join(f"«{h}»" for h in table.header[:12]) or "нет"
        known = "submission, SIS Login ID, ID number, Email address, Username, «Адрес электронной почты», «Логин»"
        raise RosterError(
            f"{where(path, 1)}: не найден столбец, по которому узнать студента (нужен один из: "
            f"{known}). Столбцы в файле ({table.described}): {found}."
        )
    students = []
    for line, cells in table.rows:
        if len(cells) > len(table.header) and any(cells[len(table.header):]):
            extra = next(i for i in range(len(table.header), len(cells)) if cells[i])
            raise RosterError(
                f"{where(path, line, extra + 1)}: значений больше, чем столбцов в заголовке "
                f"({len(table.header)}): «{cells[extra][:40]}». Возможно, в значении есть разделитель "
                "без кавычек."
            )
        fields = {key: cells[i] for i, key in columns.items() if i < len(cells) and cells[i]}
        if any(normalized(value).startswith(SKIPPED_ROWS) for value in fields.values()):
            continue  # Canvas's "Points Possible" row
        if not any(fields.get(key) for key in STRONG):
            first = min(i for i, key in columns.items() if key in STRONG)
            raise RosterError(
                f"{where(path, line, first + 1)}: у студента нет ни одного идентификатора "
                f"({', '.join(named[k] for k in STRONG if k in named)} пусты)."
            )
        students.append(Student(line, fields))
    if not students:
        raise RosterError(f"{where(path, 2)}: в списке нет ни одного студента")
    return Roster(path, students, named, table.described)


def download_names(name: str, source: str = "") -> list[str]:
    """The submission's output name and its folder's or zip's name (without `.zip`): what a Moodle or
    Canvas download called it, to match MOODLE_FOLDER and CANVAS_FILE against."""
    texts = [name, Path(source).name if source else ""]
    return [text[:-4] if text.lower().endswith(".zip") else text for text in texts if text]


def submission_keys(name: str, source: str = "") -> tuple[set[str], set[str]]:
    """(exact keys, name keys) of a submission: its output name and folder/zip name; a Moodle
    folder's student name is a name key only (weak)."""
    exact = {normalized(name)}
    weak = set()
    for stem in download_names(name, source):
        exact.add(normalized(stem))
        moodle = MOODLE_FOLDER.match(stem)
        if moodle:
            weak.add(normalized(moodle.group("name")))
        canvas = CANVAS_FILE.match(stem)
        if canvas:
            exact.add(normalized(canvas.group("canvas_id")))
            weak.add(normalized(canvas.group("login")))
    exact.discard("")
    return exact, weak


@dataclass
class Matching:
    student_of: dict[str, int]  # submission -> index in roster.students
    unmatched: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)  # human-readable, one per problem
    duplicates: list[str] = field(default_factory=list)  # one student, several submissions


def match(roster: Roster, submissions: list[tuple[str, str]]) -> Matching:
    """Match (name, source) pairs to students; see the module's docstring for the rules."""
    strong_index: dict[str, set[int]] = defaultdict(set)
    weak_index: dict[str, set[int]] = defaultdict(set)
    for number, student in enumerate(roster.students):
        for key in student.strong_keys():
            strong_index[key].add(number)
        for key in student.weak_keys():
            weak_index[key].add(number)
    result = Matching({})
    claimed: dict[int, list[str]] = defaultdict(list)
    for name, source in submissions:
        exact, weak = submission_keys(name, source)
        found = set().union(*(strong_index.get(key, set()) for key in exact))
        if not found:  # a Canvas file's login against the roster's logins, before any name
            found = set().union(*(strong_index.get(key, set()) for key in weak))
        if not found:
            found = set().union(*(weak_index.get(key, set()) for key in exact | weak))
        if len(found) == 1:
            number = next(iter(found))
            result.student_of[name] = number
            claimed[number].append(name)
        elif found:
            who = ", ".join(roster.students[i].display_name for i in sorted(found))
            result.ambiguous.append(f"{name} → {who}")
        else:
            result.unmatched.append(name)
    for number, names in claimed.items():
        if len(names) > 1:
            result.duplicates.append(f"{roster.students[number].display_name}: {', '.join(names)}")
            for name in names:
                del result.student_of[name]
    return result
