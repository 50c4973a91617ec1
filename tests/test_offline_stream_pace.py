"""Issue 19: the offline model streams at a visible, configurable pace; 0 turns pacing off."""

from __future__ import annotations

import openai
import pytest

from course_lib.config import Settings
from course_lib.llm.client import LLMClient
from course_lib.llm.offline import OfflineModel, OfflineTransport

MESSAGES = [{"role": "user", "content": "Получил заказ 8041 с кофемашиной. Она не включается."}]


def paced_client(chars_per_second: float, waits: list[float]) -> openai.OpenAI:
    transport = OfflineTransport(OfflineModel(), chars_per_second=chars_per_second, sleep=waits.append)
    return openai.OpenAI(api_key="x", base_url="http://offline-teaching-model.invalid/v1", max_retries=0,
                         http_client=openai.DefaultHttpxClient(transport=transport))


def stream_text(client: openai.OpenAI) -> str:
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_a_streamed_reply_waits_its_length_at_the_configured_rate():
    waits: list[float] = []
    text = stream_text(paced_client(100.0, waits))
    assert len(waits) > 1  # piece by piece, not all at once
    assert sum(waits) == pytest.approx(len(text) / 100.0)


def test_zero_means_no_pacing_and_plain_calls_are_never_paced():
    waits: list[float] = []
    assert stream_text(paced_client(0.0, waits))
    assert waits == []
    paced = paced_client(100.0, waits)
    assert paced.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content
    assert waits == []


def test_the_setting_reaches_the_transport(monkeypatch):
    monkeypatch.setenv("OFFLINE_STREAM_CHARS_PER_SECOND", "0")
    assert Settings(_env_file=None).offline_stream_chars_per_second == 0
    monkeypatch.delenv("OFFLINE_STREAM_CHARS_PER_SECOND")
    default = Settings(_env_file=None).offline_stream_chars_per_second
    assert 50 <= default <= 1000  # visible, yet a short reply takes about a second
    client = LLMClient(Settings(_env_file=None, llm_backend="offline", offline_stream_chars_per_second=0))
    pieces: list[str] = []
    assert client.generate(MESSAGES, on_delta=pieces.append).text == "".join(pieces)


def test_a_negative_rate_is_refused():
    with pytest.raises(ValueError):
        OfflineTransport(OfflineModel(), chars_per_second=-1)
    from course_lib.config import SettingsError, load_settings

    with pytest.raises(SettingsError, match="OFFLINE_STREAM_CHARS_PER_SECOND"):
        load_settings(_env_file=None, offline_stream_chars_per_second=-5)
