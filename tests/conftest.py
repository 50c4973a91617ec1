"""Shared fixtures. Every test runs with outbound network blocked: loopback only.

That is how the suite proves the course works offline — a test that tried to reach a provider or
download tiktoken's files would fail with `NetworkBlocked` instead of passing by luck.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path

import pytest

# The suite's own helpers (fake OpenAI server, the llama.cpp stand-in) live in tests/support:
# never in course_lib, so they are not shipped to students.
sys.path.insert(0, str(Path(__file__).with_name("support")))

from course_lib.config import Settings


class NetworkBlocked(RuntimeError):
    pass


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and the like
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded(method):
        def connect(self: socket.socket, address: object):
            if not _is_loopback(address):
                raise NetworkBlocked(f"тест попытался выйти в сеть: {address!r}")
            return method(self, address)

        return connect

    monkeypatch.setattr(socket.socket, "connect", guarded(real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guarded(real_connect_ex))
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo(socket.getaddrinfo))


def _guarded_getaddrinfo(real):
    def getaddrinfo(host, *args, **kwargs):
        if host not in (None, "localhost") and not _is_loopback((host,)):
            raise NetworkBlocked(f"тест попытался разрешить имя: {host!r}")
        return real(host, *args, **kwargs)

    return getaddrinfo


@pytest.fixture
def offline_settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings that ignore the developer's own .env and environment: offline, default budget."""
    for name in (
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_BACKEND", "CHAT_INPUT_TOKEN_BUDGET",
        "OPENAI_MODEL", "MAX_OUTPUT_TOKENS", "LLM_INSTRUCTION_ROLE", "SUMMARY_MODEL",
        "SUMMARY_MAX_CHARS", "CHAT_KEEP_RECENT_TURNS", "CHAT_SESSION_TTL_SECONDS", "MODEL_PRICES",
        "CHAT_STORE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OFFLINE_STREAM_CHARS_PER_SECOND", "0")  # fast without the Makefile too
    return Settings(_env_file=None, llm_backend="offline")


@pytest.fixture
def offline_client(offline_settings: Settings):
    """The course's offline model behind an LLMClient (the developer's environment ignored), closed
    after the test."""
    from course_lib.llm.client import LLMClient

    with LLMClient(offline_settings) as made:
        yield made


@pytest.fixture
def make_settings(offline_settings: Settings):
    def make(**changes: object) -> Settings:
        return offline_settings.model_copy(update=changes)

    return make


# --- Spreading the suite over pytest-xdist workers (`make test`: -n N --dist loadfile) ---------
# A file is one unit of work, so its module fixtures are built once and a notebook's cells run in
# order in one kernel; each test of a SPREAD file is an independent notebook run, a unit of its own.
# Units start longest first (measured with --durations on 2 cores; `--no-loadscope-reorder` keeps
# this order), so that no worker picks up a 40-second file last. Only the wall time depends on it.
LONGEST_FIRST = (
    "tests/test_notebooks_on_a_rambling_model.py",
    "tests/test_instructor_new_exercise.py",
    "tests/browser/test_browser_e2e.py",
    "tests/test_notebooks_with_solutions.py",
    "tests/test_notebook_rerun.py",
    "tests/test_instructor_intake.py",
    "tests/test_grading_hostile.py",
    "tests/test_console.py",
    "tests/test_stores_processes.py",
    "tests/test_session_store.py",
    "tests/test_grading_cli.py",
    "tests/test_instructor_rosters.py",
    "tests/test_instructor_journey.py",
    "tests/test_grading_release.py",
)
SPREAD = ("tests/test_notebooks_with_solutions.py", "tests/test_notebook_rerun.py")


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: number for number, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_file_of(item.nodeid), len(rank)))  # stable: cells keep order


@pytest.hookimpl(optionalhook=True)  # pytest -p no:xdist still runs the suite, serially
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndNotebookRuns(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = _file_of(nodeid)
            return nodeid if path in SPREAD else path

    return FilesAndNotebookRuns(config, log)
