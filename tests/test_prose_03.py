"""Notebook 03 (sessions): what its prose and structure promise stays true.

Guards the false sentences fixed in issue 9 (saved outputs "show SESSION-ID/T"; a promise of a
a notebook that does not exist; 07 only as a working link), the session-lifetime (TTL) section, prose numbers that refer to
outputs, and that the taught classes are the ones `course_lib.steps.sessions` holds.

The reply() diff, the failure and race demos, the TTL section and the ChatService comparison moved
into `bonus/03_sessions_in_depth.ipynb` (issue 29); their checks read it (`bonus`), and the checks of
the prose as a whole read both (`both`).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.steps import sessions
from notebook_text import cell_text, lesson_text, markdown_text, stream_text
from test_steps_match_notebooks import without_docstrings

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "03_sessions.ipynb"
BONUS = ROOT / "notebooks" / "bonus" / "03_sessions_in_depth.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / "03_sessions.json"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


@pytest.fixture(scope="module")
def bonus():
    return nbformat.read(BONUS, as_version=4).cells


@pytest.fixture(scope="module")
def both(cells, bonus):
    return cells + bonus


markdown = markdown_text


def normalized(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip("\n").splitlines())


text_output = stream_text


def cell_with(cells, snippet: str):
    return next(c for c in cells if c.cell_type == "code" and snippet in c.source)


@pytest.mark.parametrize(
    "name", ["ChatSession", "SessionReply", "normalize_session_id", "SessionRegistry", "SessionChatService"]
)
def test_taught_code_is_the_module_code(cells, name):
    # Syntax trees without docstrings: the cell may carry Russian comments and docstrings.
    module_source = without_docstrings(inspect.getsource(getattr(sessions, name)))
    matches = [c for c in cells if c.cell_type == "code" and c.source.lstrip().startswith(("class", "def", "@"))
               and without_docstrings(c.source) == module_source]
    assert len(matches) == 1, f"03 must show {name} exactly as course_lib/steps/sessions.py holds it"


def test_no_claim_that_saved_outputs_are_masked(both):
    # The sanitizer (notebooks/sanitize.cfg) acts only inside nbval; stored outputs hold real values.
    prose = markdown(both)
    assert "SESSION-ID" not in prose
    assert not re.search(r"в сохран\w+ вывод\w*[^.]*заменя", prose)
    assert "nbval" not in prose and "sanitize.cfg" not in prose  # CI's tools are not the student's business
    assert "при каждом запуске значения будут другими" in prose


@pytest.mark.parametrize("where", [NOTEBOOK, BONUS], ids=["main", "bonus"])
def test_no_promise_of_notebooks_that_do_not_exist(where):
    prose = markdown(nbformat.read(where, as_version=4).cells)
    for number in re.findall(r"ноутбук\w*\s+(\d\d)", prose):
        assert list((ROOT / "notebooks").glob(f"{number}_*.ipynb")), f"03 refers to notebook {number}"
    # Notebook 07 exists now: 03 may point to it, but only with a link that opens it.
    for link in re.findall(r"\]\(([^)]+\.ipynb)\)", prose):
        assert (where.parent / link).is_file(), f"03 links a notebook that does not exist: {link}"
    assert "07_persistence_and_memory.ipynb" in prose


def test_session_lifetime_section(cells, bonus):
    prose = markdown(bonus)
    assert "утечк" in prose and "TTL" in prose and "TTL" in markdown(cells)
    assert re.search(r"Kernel → Restart|перезапуск\w* ядра", markdown(cells))  # a notebook restart loses everything
    demo = cell_with(bonus, "session_ttl_seconds=30 * 60")
    for call in ("clock=clock", "session_ids()", "expire_idle_sessions()", "clock.advance("):
        assert call in demo.source
    assert "Минута 45, живые сессии: ('anna',)" in text_output(demo)


def test_prose_numbers_come_from_the_outputs(bonus):
    prose = markdown(bonus)
    leak = cell_with(bonus, "leaky = SessionChatService(offline_client)")
    assert "Сто посетителей" in prose and "range(100)" in leak.source
    assert "записей в _sessions: 100, сообщений в хранилище: 200" in text_output(leak)
    assert "записей в _sessions: 101, сообщений в хранилище: 0" in text_output(leak)
    assert "service._histories.get_messages(key)" in leak.source  # messages are counted in the store
    ttl_output = text_output(cell_with(bonus, "session_ttl_seconds=30 * 60"))
    for minute in re.findall(r"На минуте (\d+)", prose):
        assert re.search(rf"Минута {minute}[,:]", ttl_output)


def test_the_library_is_shown_with_a_fake_clock_not_a_sleep(both):
    code = "\n".join(c.source for c in both if c.cell_type == "code")
    assert "sleep(" not in code


def test_quizzes_and_practice(cells, bonus, both):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    assert {"session-isolation", "session-ttl"} <= set(quizzes)  # seed 002 step 9, and TTL
    assert 'show_quiz("03_sessions", "session-ttl")' in "\n".join(c.source for c in bonus)  # beside its section
    shown = []
    for cell in both:
        if cell.cell_type == "code" and "show_quiz(" in cell.source:
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True
            shown += re.findall(r'show_quiz\("03_sessions", "([a-z0-9-]+)"\)', cell.source)
    assert sorted(shown) == sorted(quizzes)
    practice = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "## Практика" in c.source)
    assert "[exercises/session_history.py](../exercises/session_history.py)" in cells[practice].source
    assert any('check("session_history")' in c.source for c in cells[practice + 1:])


def test_one_spelling(both):
    prose = "\n".join(c.source for c in both)
    assert not re.search(r"офлайн\s+модел|оффлайн|офлайн учебн", prose, re.IGNORECASE)
    assert not re.search(r"\bурок", prose, re.IGNORECASE)


# --- issue 17: the student's code runs in 03 -------------------------------------------------------

def test_the_students_code_runs_in_03(cells):
    setup = next(c for c in cells if c.cell_type == "code" and "your_code(" in c.source)
    for line in ('build_chat_messages = your_code("build_chat_messages")',
                 'validate_history = your_code("validate_history")',
                 'SessionHistory = your_code("SessionHistory")'):
        assert line in setup.source
    # 03's service commits with the store's add_turn: 02's commit_turn is not loaded here.
    assert "commit_turn" not in "\n".join(c.source for c in cells if c.cell_type == "code")
    assert cell_text(setup).count("↪") == 3  # one line each on a fresh bundle (a display in Jupyter)
    store = next(c for c in cells if c.cell_type == "code" and "store = SessionHistory()" in c.source)
    assert "После reset('session-a'): в A 0 сообщений, в B 2" in text_output(store)
    registry = next(c for c in cells if c.cell_type == "code" and "class SessionRegistry" in c.source)
    assert "self._histories = SessionHistory()" in registry.source
    service = next(c for c in cells if c.cell_type == "code" and "class SessionChatService" in c.source)
    assert "build_chat_messages(" in service.source
    assert "history = self._histories.get_messages(key)" in service.source
    assert "validate_history(history)" in service.source  # 02's check before the request, as in 02
    assert "self._histories.add_turn(key, messages[-1][\"content\"], reply_text)" in service.source


def test_the_store_holds_the_messages_and_chat_session_the_lock(cells):
    prose = markdown(cells)
    assert "ChatSession(messages=" not in prose and "точные сообщения и блокировка" not in prose
    assert "Класс уже работал в разделе 1" not in prose  # it runs the whole service now
    assert "На этом классе работают сервисы этого ноутбука, 04 и 05" in prose
    assert "_histories: SessionHistory" in prose and "ChatSession(lock)" in prose
    # One sentence says why the lock is the service's, not the store's.
    assert "Почему блокировка не внутри `SessionHistory`?" in prose
    assert "блокировка сессии охватывает весь ход" in prose
    session = next(c for c in cells if c.cell_type == "code" and "class ChatSession" in c.source)
    assert "messages" not in session.source.split('"""')[-1]  # its only field is the lock


def test_get_or_create_is_a_fill_in(cells):
    stub = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "def get_or_create_session(" in c.source)
    assert 'raise NotImplementedError("Заполните get_or_create_session")' in cells[stub].source
    assert "get_or_create_session = try_fill_in(get_or_create_session," in cells[stub + 1].source
    assert "ячейка ещё не заполнена" in text_output(cells[stub + 1])
    registry = next(c for c in cells if c.cell_type == "code" and "class SessionRegistry" in c.source)
    assert "return get_or_create_session(self._sessions, key)" in registry.source


# --- issue 18 ---------------------------------------------------------------------------------------

def test_ttl_is_not_said_to_need_a_database(bonus):
    prose = markdown(bonus)
    assert "Чтобы разговор переживал и TTL, и перезапуск" not in prose
    assert "TTL работает и там" in prose


def test_the_session_lock_is_not_a_defence_against_mixing_users():
    quiz = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))["session-isolation"]
    for option in quiz["options"]:
        if "блокировк" in option["text"].lower():
            assert option["correct"] is False, option["text"]


def test_practice_says_how_to_hand_in(cells):
    practice = next(c for c in cells if c.cell_type == "markdown" and "## Практика" in c.source).source
    assert "python -m course_lib handin" in practice and "handin.zip" in practice


# --- second review (issue 18): sentences fixed against their outputs --------------------------

def test_request_size_sentence_matches_the_per_turn_output(cells):
    prose = markdown(cells)
    assert "на одно сообщение больше, чем было в истории до хода, плюс новое" not in prose
    assert "на два сообщения длиннее истории до хода" in prose
    shown = text_output(cell_with(cells, "запрос = developer + "))
    for turn in re.findall(r"developer \+ (\d+) из истории \+ новое = (\d+)", shown):
        assert int(turn[1]) == int(turn[0]) + 2, shown


def test_the_race_shows_the_roles_the_prose_speaks_of(bonus):
    assert "с правильным чередованием ролей" in markdown(bonus)
    race = cell_with(bonus, "def race(")
    assert "assert " not in race.source  # the CI check lives in the collapsed cell below
    assert text_output(race).count("история ['user', 'assistant', 'user', 'assistant']") == 2


def test_the_leak_story_is_told_in_the_order_the_cell_runs_it(bonus):
    prose = markdown(bonus)
    assert "пишут по одному сообщению и уходят; потом все они нажимают" not in prose
    assert "каждый нажимает `/new` и уходит" in prose


def test_agreement_and_one_word_for_the_lock(cells, both):
    prose = markdown(both)
    assert "Вторая и третья — нет" not in prose and "Второе и третье — нет" in prose
    assert not re.search(r"\bзам(ок|ка|ком)\b", prose)  # glossary: «блокировка»
    assert "Работает ваш код" not in prose  # the course's version may be what runs
    assert "Второе и третье — нет" in markdown(cells)
