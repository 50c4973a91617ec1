"""Rules every notebook's prose keeps, main and bonus (issue 18): no words for developers, one spelling
per term, no machine-dependent numbers, and no paths of the machine that ran it in the stored outputs.
Notebook-specific sentences live in tests/test_prose_NN.py; how long a main notebook may be (cells,
not words) and how it is ordered, in tests/test_notebook_structure.py."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from notebook_text import ALL_NOTEBOOKS, all_output_text, markdown_text, notebook_name

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ALL_NOTEBOOKS
# Words a student never needs (they name the course's sources as its authors filed them) and
# spellings the glossary replaced (notebooks/glossary.md).
INSIDER = ("seed", "course_spec", "issue ")
NOT_THE_GLOSSARY = ("офлайн модель", "оффлайн", "резюме", "саммари", "горячем пути", "честно", "реплик")


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=notebook_name)
def cells(request):
    return nbformat.read(request.param, as_version=4).cells


def test_no_insider_words_and_the_glossary_spelling(cells):
    text = markdown_text(cells).lower()
    assert not [word for word in INSIDER + NOT_THE_GLOSSARY if word in text]


def test_no_machine_dependent_number_in_prose(cells):
    # A duration like «3,4 с» measured on one machine; a version («0.3.36 с моделью») is not one.
    assert not re.search(r"(?<![\d.])\d+[.,]\d+(?![.\d])\s?(?:с|мс|сек|ms|s)\b", markdown_text(cells))


def test_outputs_hold_no_paths_of_the_machine_that_ran_them(cells):
    text = all_output_text(cells)
    assert "/tmp/" not in text and str(ROOT) not in text and "/root/" not in text


def test_the_glossary_defines_the_window_and_context_rot_precisely():
    # The context window holds the request and the reply; context rot is quality falling as the input
    # grows, a different effect from «lost in the middle» (both are named, neither for the other).
    rows = {line.split("|")[1].strip(): line.split("|")[2] for line in
            (ROOT / "notebooks" / "glossary.md").read_text(encoding="utf-8").splitlines() if line.startswith("| **")}
    assert "запрос **и** ответ" in rows["**контекстное окно модели**"]
    assert "растёт вход" in rows["**context rot**"] and "lost in the middle" in rows["**context rot**"]


# Phrases the fourth edition replaced (issue 30), in every notebook's prose, code and outputs and in the
# Markdown beside the notebooks: «затравка» → «служебные токены начала ответа», «заказать сбой» →
# «намеренно вызвать сбой», «дыра» → «разрыв», «Assistant» → «Поддержка», «в деле» → «на практике».
REPLACED = ("затравк", "заказать сбой", "заказываем сбой", "закажем", "дыр", "assistant: ", "в деле",
            "голое «да»", "стоит как квадрат", "запоминает счёт", "считает токенами самой модели", "оперативная память")


def _everything(cells) -> str:
    return "\n".join(["".join(cell.source) for cell in cells] + [all_output_text(cells)]).lower()


def test_no_phrase_the_fourth_edition_replaced(cells):
    text = _everything(cells)
    assert not [phrase for phrase in REPLACED if phrase in text]


@pytest.mark.parametrize("name", ["glossary.md", "appendix_setup.md"])
def test_no_replaced_phrase_beside_the_notebooks(name):
    text = (ROOT / "notebooks" / name).read_text(encoding="utf-8").lower()
    assert not [phrase for phrase in REPLACED if phrase in text and not (name == "glossary.md" and phrase == "дыр")]


# A decimal number in a Russian line of output is written with a comma («0,03 с», «+12,2 %»); versions
# (0.3.36), model names (gpt-4.1), prices in dollars, URLs and file names keep their dots.
DOTTED = re.compile(r"(?<![\d.$v])\d+\.\d+(?![\d.])")
NOT_A_DECIMAL = re.compile(r"\d+\.\d+\.\d+|gpt-4\.1|llama|qwen|\$|http|\.py|version|\.gguf|o200k|cl100k", re.IGNORECASE)


def test_decimals_in_russian_output_lines_use_a_comma(cells):
    lines = all_output_text(cells).splitlines()
    dotted = [line for line in lines
              if re.search("[а-яё]", line, re.IGNORECASE) and DOTTED.search(line) and not NOT_A_DECIMAL.search(line)]
    assert not dotted
