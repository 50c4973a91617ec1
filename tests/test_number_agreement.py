"""Numbers agree with their nouns in every printed string: «151 токен», «62 токена», «263 токена».

Two guards: what the notebooks' stored outputs show (the outputs a student sees), and the library's
f-strings, which must format a count through `course_lib.russian` rather than with a fixed ending.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course_lib.russian import plural, plural_form
from notebook_text import ALL_NOTEBOOKS, notebook_name

ROOT = Path(__file__).resolve().parents[1]
NOUNS = {
    "токен": ("токен", "токена", "токенов"),
    "сообщени": ("сообщение", "сообщения", "сообщений"),
    "ход": ("ход", "хода", "ходов"),
    "факт": ("факт", "факта", "фактов"),
    "вызов": ("вызов", "вызова", "вызовов"),
}
COUNTED = re.compile(r"(?<![\w.,])(\d+) (токен\w*|сообщени\w*|ход\w*|факт\w*|вызов\w*)")
# After these words Russian takes the genitive whatever the number («из 3 сообщений», «до 5 ходов»).
GOVERNED = re.compile(r"(?:\bиз|\bдо|\bот|\bболее|\bменее|\bсвыше|\bоколо|\bкроме|\bбез|\bпосле|\bдля)\s+$", re.I)


def disagreements(text: str) -> list[str]:
    found = []
    for match in COUNTED.finditer(text):
        number, word = int(match.group(1)), match.group(2)
        forms = next((forms for stem, forms in NOUNS.items() if word.startswith(stem)), None)
        if forms is None or word not in forms or GOVERNED.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        if word != plural_form(number, forms):
            found.append(text[max(0, match.start() - 30) : match.end()])
    return found


def _outputs(cell) -> list[str]:
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            texts.append(output["text"])
        for kind in ("text/plain", "text/html"):
            texts.append(str(output.get("data", {}).get(kind, "")))
    return texts


NOTEBOOKS = ALL_NOTEBOOKS  # main and bonus


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_name)
def test_stored_outputs_agree_in_number(path):
    notebook = nbformat.read(path, as_version=4)
    bad = [(index, snippet) for index, cell in enumerate(notebook.cells) for text in _outputs(cell)
           for snippet in disagreements(text)]
    assert not bad, bad


def test_library_fstrings_do_not_fix_an_ending_after_a_count():
    fixed = re.compile(r"\{[^{}]+\} (?:" + "|".join(form for forms in NOUNS.values() for form in forms) + r")\b")
    bad = [f"{path.relative_to(ROOT)}:{number}" for path in sorted((ROOT / "course_lib").rglob("*.py"))
           for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
           for match in fixed.finditer(line)
           if not GOVERNED.search(line[: match.start()][-12:]) and "format_share" not in match.group(0)]
    assert not bad, bad


def test_the_checker_itself_catches_a_wrong_ending():
    assert disagreements("в запросе 62 токенов") == ["в запросе 62 токенов"]
    assert disagreements("из 3 сообщений, итого 151 токен и 2 хода") == []
    assert [plural(n, NOUNS["токен"]) for n in (1, 2, 5, 11, 21, 62, 263)] == [
        "1 токен", "2 токена", "5 токенов", "11 токенов", "21 токен", "62 токена", "263 токена"]
