import os
import subprocess
import sys
from pathlib import Path

from course_lib.console import run_console

from helpers import MONITOR_DIALOGUE, MONITOR_RECALL, make_app, run_course_command

ROOT = Path(__file__).resolve().parent.parent


def chat(monkeypatch, lines: list[str], args: tuple[str, ...] = (), **env: str) -> str:
    """`python -m course_lib chat ARGS` in this process (see helpers.run_course_command)."""
    result = run_course_command(monkeypatch, ["chat", *args], lines, **env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def run_chat(lines: list[str], args: tuple[str, ...] = (), **env: str) -> str:
    """The same command in a process of its own: for what is about separate processes."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "CHAT_"))}
    environment["LLM_BACKEND"] = "offline"  # a developer's own .env key must not switch backends
    environment.update(env)
    result = subprocess.run(
        [sys.executable, "-m", "course_lib", "chat", *args],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT / "tests",  # no .env here: only the variables we pass count
        env=environment,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def assistant_lines(output: str) -> list[str]:
    return [line.split("Поддержка: ", 1)[1] for line in output.splitlines() if "Поддержка: " in line]


def test_console_remembers_the_order_number(monkeypatch):
    output = chat(monkeypatch, ["Получил заказ 8041 с кофемашиной. Она не включается.", "Напомните номер заказа.", "/exit"])
    replies = assistant_lines(output)
    assert len(replies) == 2 and "8041" in replies[1]
    assert "Бэкенд: офлайн-модель" in output
    assert "Сообщений в истории: 4" in output


def test_console_with_budget_300_summarizes_and_recalls(monkeypatch):
    output = chat(monkeypatch, [*MONITOR_DIALOGUE, MONITOR_RECALL, "/exit"], CHAT_INPUT_TOKEN_BUDGET="300")
    assert "Сводка обновлена на этом ходу: да" in output
    last = assistant_lines(output)[-1]
    assert "7718" in last and "подставк" in last.lower()


def test_console_end_of_input_exits_cleanly_and_errors_do_not_stop_it(monkeypatch):
    output = chat(monkeypatch, ["", "Привет"])  # no /exit: the input just ends
    assert "Сообщение не должно быть пустым: модели ничего не отправлено." in output
    assert len(assistant_lines(output)) == 1


def test_console_refuses_bad_settings_with_the_variable_name(monkeypatch):
    result = run_course_command(monkeypatch, ["chat"], CHAT_INPUT_TOKEN_BUDGET="0")
    assert result.returncode == 2
    assert "CHAT_INPUT_TOKEN_BUDGET" in result.stderr


def test_new_command_starts_from_two(offline_settings):
    ids = iter(["first", "second"])
    inputs = iter(["Получил заказ 8041 с кофемашиной.", "Коробка целая.", "/new", "А когда его доставили?", "/exit"])
    printed: list[str] = []
    with make_app(offline_settings) as app:
        run_console(
            app.chat_service, "test", "gpt-4.1", "offline",
            read=lambda prompt: next(inputs), out=printed.append, new_session_id=lambda: next(ids),
        )
        assert app.chat_service.get_session("first").messages == ()
    history_lines = [line for line in printed if line.startswith("Сообщений в истории")]
    assert history_lines == ["Сообщений в истории: 2", "Сообщений в истории: 4", "Сообщений в истории: 2"]
    assert "Новый Session ID: second" in printed


def test_two_console_processes_on_one_store_resume_a_session(tmp_path):
    store = str(tmp_path / "sessions.sqlite3")
    first = run_chat(["Получил заказ 8041 с кофемашиной. Она не включается.", "/exit"],
                     args=("--store", store, "--session", "case-8041"))
    assert "Session ID: case-8041 (продолжаем: сообщений в истории 0" in first
    second = run_chat(["Напомните номер заказа.", "/exit"], args=("--store", store, "--session", "case-8041"))
    assert "сообщений в истории 2" in second
    assert "8041" in assistant_lines(second)[-1]
    assert "Сообщений в истории: 4" in second


def test_without_store_nothing_is_written_and_session_needs_store(monkeypatch):
    result = run_course_command(monkeypatch, ["chat", "--session", "x"])
    assert result.returncode == 2 and "--store" in result.stderr



def test_long_term_memory_across_processes_isolation_and_forget(tmp_path, monkeypatch):
    store = str(tmp_path / "course.sqlite3")
    run_chat(["Меня зовут Анна. Заказ 7718, монитор, на подставке трещина.", "/exit"],
             args=("--store", store, "--user", "anna"))  # a process of its own writes; this one reads
    later = chat(monkeypatch, ["Как меня зовут?", "Напомните номер заказа.", "/memory", "/exit"],
                 args=("--store", store, "--user", "anna"))
    replies = assistant_lines(later)
    assert "Анна" in replies[0] and "7718" in replies[1]
    assert "  - Имя: Анна" in later
    stranger = chat(monkeypatch, ["Как меня зовут?", "Напомните номер заказа.", "/exit"],
                    args=("--store", store, "--user", "boris"))
    assert not any("Анна" in reply or "7718" in reply for reply in assistant_lines(stranger))
    forgotten = chat(monkeypatch, ["/forget", "Как меня зовут?", "Напомните номер заказа.", "/exit"],
                     args=("--store", store, "--user", "anna"))
    assert "стёрты из файла" in forgotten
    assert not any("Анна" in reply or "7718" in reply for reply in assistant_lines(forgotten))
    raw = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert "Анна".encode() not in raw and b"7718" not in raw


def test_console_streams_by_default_and_no_stream_prints_whole_replies(monkeypatch):
    lines = ["Получил заказ 8041 с кофемашиной. Она не включается.", "/exit"]
    streamed, whole = chat(monkeypatch, lines), chat(monkeypatch, lines, args=("--no-stream",))
    assert assistant_lines(streamed) == assistant_lines(whole)
    assert "Первый фрагмент ответа через:" in streamed and "Первый фрагмент" not in whole
    assert "Стоимость хода: $" in streamed
    assert "Поправка токенов: оценка совпадает с провайдером" in streamed


def test_a_cut_stream_is_marked_not_saved(offline_settings):
    printed: list[str] = []
    inputs = iter(["Получил заказ 8041 с кофемашиной.", "Она не включается.", "/exit"])
    with make_app(offline_settings) as app:
        app.llm_client.offline_model.schedule_fault("stream_cut", after=1, chunks=4)
        run_console(app.chat_service, "test", "gpt-4.1", "offline", read=lambda prompt: next(inputs),
                    out=printed.append, new_session_id=lambda: "s", stream=True)
        assert len(app.chat_service.get_session("s").messages) == 2
    assert "[ответ оборвался и не сохранён в истории]" in printed
    assert any(line.startswith("Ошибка чата:") and "оборвался" in line for line in printed)
