from pathlib import Path

import pytest

from course_lib.config import Settings, SettingsError, load_settings

SECRET = "test-secret-value-not-a-real-key-1234567890"


def test_defaults_are_offline_and_budget_6000(offline_settings):
    settings = Settings(_env_file=None)
    assert settings.llm_backend == "auto"
    assert settings.effective_backend == "offline"
    assert settings.chat_input_token_budget == 6000
    assert settings.model == "gpt-4.1"
    assert settings.instruction_role == "developer"


def test_auto_switches_to_openai_when_a_key_is_set(offline_settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert Settings(_env_file=None).effective_backend == "openai"
    monkeypatch.setenv("LLM_BACKEND", "offline")
    assert Settings(_env_file=None).effective_backend == "offline"


def test_blank_key_in_env_file_means_no_key(offline_settings, tmp_path: Path):
    env_file = tmp_path / ".env"
    env_file.write_text("OPENAI_API_KEY=\nOPENAI_BASE_URL=\nCHAT_INPUT_TOKEN_BUDGET=300\n", encoding="utf-8")
    settings = load_settings(_env_file=env_file)
    assert settings.openai_api_key is None
    assert settings.openai_base_url is None
    assert settings.chat_input_token_budget == 300
    assert settings.effective_backend == "offline"


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5"])
def test_bad_budget_fails_at_start_naming_the_variable(offline_settings, monkeypatch, value):
    monkeypatch.setenv("CHAT_INPUT_TOKEN_BUDGET", value)
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert "CHAT_INPUT_TOKEN_BUDGET" in message
    assert "Неверные настройки" in message


def test_unknown_backend_lists_the_allowed_values(offline_settings, monkeypatch):
    monkeypatch.setenv("LLM_BACKEND", "cloud")
    with pytest.raises(SettingsError, match="LLM_BACKEND.*'auto', 'offline' или 'openai'"):
        load_settings(_env_file=None)


def test_openai_backend_without_key_is_refused(offline_settings, monkeypatch):
    monkeypatch.setenv("LLM_BACKEND", "openai")
    with pytest.raises(SettingsError, match="OPENAI_API_KEY"):
        load_settings(_env_file=None)


def test_the_key_is_never_shown(offline_settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    settings = load_settings(_env_file=None)
    assert SECRET not in repr(settings)
    assert SECRET not in str(settings)
    assert SECRET not in settings.model_dump_json()
    assert settings.openai_api_key.get_secret_value() == SECRET
    # Even in an error report about other fields.
    monkeypatch.setenv("MAX_OUTPUT_TOKENS", "0")
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None)
    assert SECRET not in str(caught.value)


def test_the_store_url_setting_refuses_an_unknown_scheme(monkeypatch):
    from course_lib.config import Settings

    monkeypatch.setenv("CHAT_STORE_URL", "redis://localhost:6379/0")
    with pytest.raises(ValueError, match="Неизвестная схема"):
        Settings(_env_file=None)


def test_the_app_keeps_sessions_where_the_setting_says(tmp_path, monkeypatch):
    from course_lib.app import build_chat_app
    from course_lib.config import Settings

    path = tmp_path / "sessions.sqlite3"
    monkeypatch.setenv("OFFLINE_STREAM_CHARS_PER_SECOND", "0")
    settings = Settings(_env_file=None, llm_backend="offline", chat_store_url=str(path))
    with build_chat_app(settings) as app:
        app.chat_service.reply("s-1", "Номер заказа 8041.")
    with build_chat_app(settings) as again:
        assert len(again.chat_service.get_session("s-1").messages) == 2
    assert path.is_file()
