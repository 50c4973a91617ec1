"""The widgets in a real browser: JupyterLab + Debian's Chromium driven by Playwright.

The test starts JupyterLab from the course's .venv on 127.0.0.1 (a free port, a random token, its
own config/data/settings folders), opens `demo.ipynb`, runs all cells, chats through the widget,
drags the budget slider and answers the quizzes (`e2e.mjs`). Screenshots go to
`artifacts/browser/` (ignored by git). JupyterLab is always shut down, whatever happens.

Skipped, with the reason in the summary, when Chromium, Node.js 20+ or `node_modules` are missing:
`tests/browser/install.sh` installs them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
NODE_TIMEOUT = 100  # seconds for the whole browser script
START_TIMEOUT = 60  # seconds for JupyterLab to answer

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
    """SIGTERM to the server (it shuts its kernels down), then SIGKILL to whatever is left of
    the process group this test created."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the group was created by start_new_session=True
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[tuple[str, str]]:
    reason = missing_piece()
    if reason and os.environ.get("REQUIRE_BROWSER_TEST") == "1":
        pytest.fail(f"REQUIRE_BROWSER_TEST=1, но {reason}")  # CI installs the pieces: a skip there is a bug
    if reason:
        pytest.skip(reason)
    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(HERE / "demo.ipynb", root / "demo.ipynb")

    config = tmp_path / "config"
    (config / "labconfig").mkdir(parents=True)
    # No news feed, no update check, no "get Jupyter news?" toast over the screenshots.
    (config / "jupyter_lab_config.json").write_text(json.dumps({"LabApp": {"news_url": None}}))
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )

    env = dict(os.environ)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CHAT_INPUT_TOKEN_BUDGET"):
        env.pop(name, None)
    env.update(
        LLM_BACKEND="offline",
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
        IPYTHONDIR=str(tmp_path / "ipython"),
    )
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(jupyter_executable()), "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # containers and CI often run as root
        command.append("--allow-root")
    log_path = tmp_path / "jupyter.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, token, process, log_path)
        yield url, token
    finally:
        stop(process)
        if ARTIFACTS.is_dir():
            shutil.copy(log_path, ARTIFACTS / "jupyter.log")


def test_widgets_in_jupyterlab_with_chromium(jupyter_lab: tuple[str, str]) -> None:
    url, token = jupyter_lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    env = dict(os.environ)
    env.update(
        JUPYTER_URL=url,
        JUPYTER_TOKEN=token,
        NOTEBOOK="demo.ipynb",
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
    assert (ARTIFACTS / "02-chat-after-recall.png").is_file()

