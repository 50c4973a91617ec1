"""Shared fixtures. Every test runs with outbound network blocked: loopback only.

That is how the suite proves the course works offline — a test that tried to reach a provider or
download tiktoken's files would fail with `NetworkBlocked` instead of passing by luck.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

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
def make_settings(offline_settings: Settings):
    def make(**changes: object) -> Settings:
        return offline_settings.model_copy(update=changes)

    return make
