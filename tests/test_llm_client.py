import logging

import pytest

from course_lib.llm import errors
from course_lib.llm.client import LLMClient
from course_lib.llm.offline import OfflineModel

MESSAGES = [
    {"role": "developer", "content": "Ты помогаешь клиенту."},
    {"role": "user", "content": "Получил заказ 8041 с кофемашиной. Она не включается."},
]


def test_generate_returns_text_usage_and_ids(offline_settings):
    with LLMClient(offline_settings) as client:
        first = client.generate(MESSAGES)
        second = client.generate(MESSAGES)
    assert first.text and first.finish_reason == "stop"
    assert first.model == "offline-teaching-model"
    assert first.total_tokens == first.prompt_tokens + first.completion_tokens
    assert first.response_id == second.response_id  # deterministic for the same input
    assert client.offline_model.last_request["messages"][0]["role"] == "developer"


@pytest.mark.parametrize(
    "fault, expected",
    [
        ("timeout", errors.LLMTimeoutError),
        ("connection", errors.LLMConnectionError),
        ("rate_limit", errors.LLMRateLimitError),
        ("server_error", errors.LLMServerError),
    ],
)
def test_sdk_exceptions_become_our_errors(offline_settings, fault, expected):
    client = LLMClient(offline_settings)
    client.offline_model.schedule_fault(fault)
    with pytest.raises(expected) as caught:
        client.generate(MESSAGES)
    assert isinstance(caught.value, errors.LLMClientError)
    assert any("а" <= ch <= "я" for ch in str(caught.value).lower())  # a Russian message
    assert client.generate(MESSAGES).finish_reason == "stop"  # one fault, one failed call


def test_truncated_and_empty_replies_are_reported_not_hidden(offline_settings):
    client = LLMClient(offline_settings)
    client.offline_model.schedule_fault("truncated")
    assert client.generate(MESSAGES).finish_reason == "length"
    client.offline_model.schedule_fault("empty")
    result = client.generate(MESSAGES)
    assert (result.text, result.finish_reason) == ("", "stop")


def test_max_output_tokens_is_honoured(make_settings):
    client = LLMClient(make_settings(max_output_tokens=3))
    result = client.generate(MESSAGES)
    assert result.finish_reason == "length"
    assert result.completion_tokens == 3


@pytest.mark.parametrize(
    "messages",
    [[], "text", [{"role": "robot", "content": "x"}], [{"role": "user", "content": 5}], ["x"]],
)
def test_malformed_messages_are_refused_before_any_call(offline_settings, messages):
    client = LLMClient(offline_settings)
    with pytest.raises(errors.LLMBadRequestError):
        client.generate(messages)
    assert client.offline_model.calls == 0


def test_system_role_setting_sends_system(make_settings):
    model = OfflineModel(accepted_instruction_roles=frozenset({"system"}))
    client = LLMClient(make_settings(instruction_role="system"), offline_model=model)
    assert client.generate(MESSAGES).finish_reason == "stop"
    assert model.last_request["messages"][0]["role"] == "system"
    assert "max_tokens" in model.last_request and model.calls == 1


def test_developer_rejected_falls_back_to_system_once_and_logs(offline_settings, caplog):
    model = OfflineModel(accepted_instruction_roles=frozenset({"system"}))
    client = LLMClient(offline_settings, offline_model=model)
    with caplog.at_level(logging.WARNING):
        result = client.generate(MESSAGES)
    assert result.finish_reason == "stop"
    assert client.instruction_role == "system"
    assert "LLM_INSTRUCTION_ROLE=system" in caplog.text
    assert "Офлайн-модель" in caplog.text and "api.openai.com" not in caplog.text
    client.generate(MESSAGES)
    assert model.calls == 3  # rejected + retried, then system straight away


def test_server_refusing_both_roles_names_the_setting(offline_settings):
    model = OfflineModel(accepted_instruction_roles=frozenset())
    client = LLMClient(offline_settings, offline_model=model)
    with pytest.raises(errors.LLMInstructionRoleError, match="LLM_INSTRUCTION_ROLE"):
        client.generate(MESSAGES)


def test_real_backend_maps_a_refused_connection(make_settings):
    # A real OpenAI client pointed at a closed loopback port: no network leaves the machine.
    from pydantic import SecretStr

    settings = make_settings(
        llm_backend="openai",
        openai_api_key=SecretStr("sk-test"),
        openai_base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        timeout_seconds=5.0,
    )
    client = LLMClient(settings)
    assert client.offline_model is None
    with pytest.raises(errors.LLMConnectionError, match="OPENAI_BASE_URL"):
        client.generate(MESSAGES)


def test_openai_backend_without_key_is_an_auth_error(make_settings):
    with pytest.raises(errors.LLMAuthenticationError, match="OPENAI_API_KEY"):
        LLMClient(make_settings(llm_backend="openai"))


def test_a_closed_client_opens_again_for_the_next_request(offline_settings):
    # A notebook's clean-up cell closes the client; re-running a section after Run All must work.
    client = LLMClient(offline_settings)
    client.close()
    assert client.generate([{"role": "user", "content": "Здравствуйте"}]).finish_reason == "stop"
    client.close()
    client.close()  # closing twice is harmless
    assert client.generate([{"role": "user", "content": "Ещё вопрос"}]).text
