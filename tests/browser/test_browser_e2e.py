"""The student's JupyterLab in a real browser: JupyterLab + Debian's Chromium driven by Playwright.

The test copies the course to a temporary folder and starts JupyterLab there with the course's own
`make lab` (root = the course folder, the shipped jupyter/ config and first workspace), plus a free
port and a random token. `e2e.mjs` then does what a student does: Lab opens on 00_setup with the
file browser at the course folder; an exercise is opened from the file browser, the reference
solution pasted into Lab's editor and saved; `check()` in the demo notebook goes from failing to
passing; the chat sends with Enter; the budget slider moves; quizzes are answered (the correct
option is not the first one). Then, off the offline path: the kernel is restarted and the dead chat
says so; a model is configured through the settings panel (a scratch notebook) — «Проверить» against
a fake OpenAI-compatible server this test runs, then «Сохранить» with an unreachable Base URL — and
`.env` is written with mode 0600 while the key appears in no output; 00 then runs against that
unreachable model and shows a short Russian error with the next step; a terminal opened from Lab
runs `python -m course_lib bench memory` with the course's python. Screenshots go to
`artifacts/browser/` (ignored by git). JupyterLab is always shut down, and the real checkout's
exercise file and `.env` are never touched: the kernel imports the copy's course_lib (PYTHONPATH).

Skipped, with the reason in the summary, when Chromium, Node.js 20+ or `node_modules` are missing:
`tests/browser/install.sh` installs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from course_lib.quizzes import displayed_question
from fake_openai import FakeOpenAI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
NODE_TIMEOUT = 220  # seconds for the whole browser script
START_TIMEOUT = 60  # seconds for JupyterLab to answer
EXERCISE = "exercises/split_into_turns.py"
DEMO = "notebooks/demo.ipynb"
SETTINGS_NOTEBOOK = "notebooks/settings_panel.ipynb"  # scratch: the panel, as 00 shows it
SECRET_KEY = "fake-browser-key-" + secrets.token_hex(12)  # must never appear in any output
UNREACHABLE_URL = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
# What a student's copy of the course holds (no tests, no solutions, no hidden cases).
COURSE_PARTS = ("Makefile", "requirements.txt", "pyproject.toml", "jupyter", "notebooks", "exercises", "course_lib")
QUIZZES = {"single": ("04_sliding_window", "removed-history-messages"),
           "multiple": ("04_sliding_window", "window-rules")}

pytestmark = pytest.mark.browser


def jupyter_executable() -> Path | None:
    for candidate in (ROOT / ".venv" / "bin" / "jupyter", Path(sys.executable).parent / "jupyter"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def missing_piece() -> str | None:
    """Why the browser test cannot run here (None when it can)."""
    hint = "установите: bash tests/browser/install.sh"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"браузерный тест пропущен: нет Chromium ({CHROMIUM}); {hint}"
    node = shutil.which("node")
    if node is None:
        return f"браузерный тест пропущен: нет Node.js; {hint}"
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    match = re.match(r"v(\d+)", version)
    if not match or int(match.group(1)) < 20:
        return f"браузерный тест пропущен: нужен Node.js 20+, найден {version or 'неизвестный'}"
    if not (HERE / "node_modules" / "playwright-core" / "package.json").is_file():
        return f"браузерный тест пропущен: нет tests/browser/node_modules/playwright-core; {hint}"
    if jupyter_executable() is None:
        return "браузерный тест пропущен: не найден jupyter в .venv (make install)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_ready(url: str, token: str, process: subprocess.Popen, log_path: Path) -> None:
    # No proxies: a CI proxy must not see (or break) requests to our own loopback server.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(f"{url}/api/status", headers={"Authorization": f"token {token}"})
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab завершился при запуске (код {process.returncode}):\n{tail(log_path)}")
        try:
            with opener.open(request, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    pytest.fail(f"JupyterLab не ответил за {START_TIMEOUT} с:\n{tail(log_path)}")


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(журнал недоступен)"


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the whole group (make and the server: the server shuts its kernels down),
    then SIGKILL to whatever is left of the process group this test created."""
    try:
        os.killpg(process.pid, signal.SIGTERM)  # the group was created by start_new_session=True
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        process.poll()
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


def copy_course(target: Path) -> None:
    for name in COURSE_PARTS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name,
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(source, target / name)
    shutil.copy(HERE / "demo.ipynb", target / DEMO)
    (target / SETTINGS_NOTEBOOK).write_text(json.dumps(settings_notebook(), ensure_ascii=False), encoding="utf-8")


def settings_notebook() -> dict:
    source = ("from course_lib.notebook_tools import setup_notebook\n"
              "from course_lib.widgets.settings import show_settings_panel\n\n"
              "setup_notebook()\nshow_settings_panel()")
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {},
             "source": "# Панель настроек модели (для браузерного теста)"},
            {"cell_type": "code", "id": "panel", "metadata": {}, "execution_count": None, "outputs": [],
             "source": source},
        ],
    }


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def lab_command(course: Path, port: int, token: str, state: Path) -> list[str]:
    """`make lab` exactly as a student runs it, plus what a test needs (no browser window, a free
    port, a token). The venv is the checkout's, already installed: `-o` tells make not to reinstall."""
    venv = jupyter_executable().parent.parent
    lab_args = " ".join([
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, for the script's checks
        "--LabApp.extension_manager=readonly",
    ])
    return ["make", "--no-print-directory", "-C", str(course), "-o", str(venv / ".course-installed"), "lab",
            f"VENV={venv}", f"LAB_STATE={state}", f"LAB_ARGS={lab_args}"]


@dataclass(frozen=True)
class Lab:
    url: str
    token: str
    course: Path
    log: Path
    venv: Path

    def get(self, path: str) -> tuple[int, bytes]:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        request = urllib.request.Request(f"{self.url}{path}", headers={"Authorization": f"token {self.token}"})
        try:
            with opener.open(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[Lab]:
    reason = missing_piece()
    if reason and os.environ.get("REQUIRE_BROWSER_TEST") == "1":
        pytest.fail(f"REQUIRE_BROWSER_TEST=1, но {reason}")  # CI installs the pieces: a skip there is a bug
    if reason:
        pytest.skip(reason)
    if shutil.which("make") is None:
        pytest.skip("браузерный тест пропущен: нет make (Lab запускается через make lab)")
    course = tmp_path / "course"
    course.mkdir()
    copy_course(course)

    env = dict(os.environ)
    # A clean student: no model settings in the environment (the copy has no .env: offline by
    # default, until the settings panel writes one), no ~/.jupyter of the developer's (the course's
    # own config still applies), and the copy's course_lib first (its .env is the one read).
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "LLM_BACKEND", "LLM_INSTRUCTION_ROLE",
                 "COURSE_DOTENV", "CHAT_INPUT_TOKEN_BUDGET", "JUPYTER_CONFIG_PATH", "JUPYTERLAB_WORKSPACES_DIR",
                 "MAKEFLAGS", "MFLAGS", "VIRTUAL_ENV"):
        env.pop(name, None)
    env.update(
        PYTHONPATH=str(course),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        IPYTHONDIR=str(tmp_path / "ipython"),
    )
    port, token = free_port(), secrets.token_hex(16)
    log_path = tmp_path / "jupyter.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            lab_command(course, port, token, tmp_path / "lab-state"), cwd=course, env=env,
            stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, token, process, log_path)
        yield Lab(url, token, course, log_path, jupyter_executable().parent.parent)
    finally:
        stop(process)
        if ARTIFACTS.is_dir():
            shutil.copy(log_path, ARTIFACTS / "jupyter.log")


def quiz_answers() -> dict[str, dict]:
    """Where the correct options are shown (the script must not just click the first one)."""
    answers = {}
    for kind, (notebook, quiz_id) in QUIZZES.items():
        shown = displayed_question(notebook, quiz_id)
        correct = sorted(shown.correct_indices)
        wrong = [index for index in range(len(shown.options)) if index not in shown.correct_indices]
        answers[kind] = {"id": quiz_id, "correct": correct, "wrong": wrong}
    assert answers["single"]["correct"] != [0], "the single-choice demo quiz must not have its answer first"
    return answers


def test_student_journey_in_jupyterlab_with_chromium(jupyter_lab: Lab, fake_model: FakeOpenAI) -> None:
    lab = jupyter_lab
    real_exercise = hashlib.sha256((ROOT / EXERCISE).read_bytes()).hexdigest()
    real_env = ROOT / ".env"
    real_env_before = real_env.read_bytes() if real_env.is_file() else None

    # The contents API serves the exercises: Lab's root is the course folder, not notebooks/.
    status, body = lab.get(f"/api/contents/{EXERCISE}")
    assert status == 200, body[:300]
    assert "NotImplementedError" in json.loads(body)["content"]
    status, body = lab.get("/api/contents?content=1")
    assert status == 200 and {"notebooks", "exercises"} <= {item["name"] for item in json.loads(body)["content"]}

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    env = dict(os.environ)
    env.update(
        JUPYTER_URL=lab.url,
        JUPYTER_TOKEN=lab.token,
        NOTEBOOK=DEMO,
        EXERCISE=EXERCISE,
        SOLUTION=(ROOT / "solutions" / "split_into_turns.py").read_text(encoding="utf-8"),
        QUIZ_ANSWERS=json.dumps(quiz_answers()),
        SETTINGS_NOTEBOOK=SETTINGS_NOTEBOOK,
        SECRET_KEY=SECRET_KEY,
        FAKE_MODEL_URL=fake_model.base_url,
        UNREACHABLE_URL=UNREACHABLE_URL,
        ARTIFACTS_DIR=str(ARTIFACTS),
        CHROMIUM=str(CHROMIUM),
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1",
    )
    try:
        result = subprocess.run(
            ["node", str(HERE / "e2e.mjs")], cwd=HERE, env=env, capture_output=True, text=True,
            timeout=NODE_TIMEOUT,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"браузерный сценарий не уложился в {NODE_TIMEOUT} с:\n{error.stdout or ''}")
    report = f"{result.stdout}\n{result.stderr}\nскриншоты: {ARTIFACTS}"
    assert result.returncode == 0, report
    print(report)

    # The edit was saved in the copy (through Lab), and the real checkout is untouched.
    saved = (lab.course / EXERCISE).read_text(encoding="utf-8")
    assert saved.strip() == (ROOT / "solutions" / "split_into_turns.py").read_text(encoding="utf-8").strip()
    assert hashlib.sha256((ROOT / EXERCISE).read_bytes()).hexdigest() == real_exercise
    for name in ("00-lab-start.png", "04-check-passing.png", "05-chat-enter.png", "08-quiz-single.png",
                 "10-chat-after-restart.png", "11-settings-saved.png", "12-setup-unreachable.png",
                 "13-terminal-bench.png"):
        assert (ARTIFACTS / name).is_file(), name

    # «Проверить» made one real call to the fake server, with the key typed into the panel.
    assert fake_model.calls, "the settings panel's check never reached the model server"
    assert all(call["auth"] == f"Bearer {SECRET_KEY}" for call in fake_model.calls)
    assert fake_model.calls[0]["body"]["model"] == "fake-model"
    assert fake_model.calls[0]["body"]["messages"][0]["role"] == "system"  # the LM Studio preset's role
    # «Сохранить» wrote the copy's .env, owner-only, with the unreachable URL and the key...
    env_file = lab.course / ".env"
    assert env_file.is_file(), "the settings panel did not write .env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600, oct(env_file.stat().st_mode)
    saved_env = env_file.read_text(encoding="utf-8")
    for line in (f"OPENAI_BASE_URL={UNREACHABLE_URL}", "OPENAI_MODEL=fake-model", "LLM_INSTRUCTION_ROLE=system",
                 f"OPENAI_API_KEY={SECRET_KEY}"):
        assert line in saved_env.splitlines(), line
    # ...and the key is in no output: the saved notebooks, the server's log, the browser script's.
    for notebook in (lab.course / "notebooks").glob("*.ipynb"):
        assert SECRET_KEY not in notebook.read_text(encoding="utf-8"), notebook.name
    assert SECRET_KEY not in report
    assert SECRET_KEY not in lab.log.read_text(errors="replace")
    # The terminal's python is the course's, and the benchmark ran to the end.
    bench = (lab.course / "bench-memory.txt").read_text(encoding="utf-8")
    assert "exit=0" in bench and f"python={lab.venv}/bin/python" in bench, bench[-500:]
    assert (real_env.read_bytes() if real_env.is_file() else None) == real_env_before, "the real .env changed"
