"""The model settings panel (notebook 00), its .env writer, the connection check and doctor --check."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from course_lib.env_file import EnvFileError, read_env, update_env_file, validate
from course_lib.model_connection import check_connection
from fake_openai import FakeOpenAI
from course_lib.widgets.settings import SettingsController, configure_model_in_text, show_settings_panel

KEY = "fake-test-key-SECRET-0123456789"
UNREACHABLE = "http://127.0.0.1:9/v1"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def model_url(fake: FakeOpenAI) -> str:
    return fake.base_url


def controller(tmp_path: Path, preset: str = "lmstudio", url: str = UNREACHABLE, key: str = KEY) -> SettingsController:
    c = SettingsController(tmp_path / ".env", environ={})
    c.choose(preset)
    c.base_url, c.model, c.key = url, "fake-model", key
    return c


# --- .env writing ------------------------------------------------------------------------------

def test_save_writes_env_0600_keeps_other_lines_and_never_says_the_key(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("# mine\nCHAT_INPUT_TOKEN_BUDGET=300\nOPENAI_MODEL=old\nOPENAI_MODEL=older\n", encoding="utf-8")
    env.chmod(0o644)
    report = controller(tmp_path).save()
    assert report.ok and KEY not in str(report)
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    text = env.read_text(encoding="utf-8")
    assert text.startswith("# mine\nCHAT_INPUT_TOKEN_BUDGET=300\n")
    assert text.count("OPENAI_MODEL=") == 1
    assert read_env(env) == {
        "CHAT_INPUT_TOKEN_BUDGET": "300", "OPENAI_MODEL": "fake-model", "LLM_BACKEND": "auto",
        "OPENAI_BASE_URL": UNREACHABLE, "LLM_INSTRUCTION_ROLE": "system", "OPENAI_API_KEY": KEY,
    }
    assert "Restart Kernel" in str(report)


def test_a_saved_key_is_kept_when_the_field_is_left_empty_and_never_read_back(tmp_path: Path) -> None:
    controller(tmp_path).save()
    again = SettingsController(tmp_path / ".env", environ={})
    assert again.key == "" and again.key_saved
    assert (again.base_url, again.model, again.instruction_role) == (UNREACHABLE, "fake-model", "system")
    again.model = "other-model"
    assert again.save().ok
    assert read_env(tmp_path / ".env")["OPENAI_API_KEY"] == KEY
    assert read_env(tmp_path / ".env")["OPENAI_MODEL"] == "other-model"


@pytest.mark.parametrize("field, value", [
    ("OPENAI_MODEL", "gpt-4.1\nOPENAI_BASE_URL=http://evil"),
    ("OPENAI_MODEL", "two words"),
    ("OPENAI_BASE_URL", "ftp://host/v1"),
    ("OPENAI_BASE_URL", "localhost:11434"),
    ("OPENAI_API_KEY", 'fakekey-"quoted"'),
    ("OPENAI_API_KEY", "fakekey-abc #comment"),
    ("LLM_INSTRUCTION_ROLE", "admin"),
    ("LLM_BACKEND", "cloud"),
    ("APP_ENV", "x"),
])
def test_hostile_values_are_refused_and_nothing_changes(tmp_path: Path, field: str, value: str) -> None:
    env = tmp_path / ".env"
    env.write_text("OPENAI_MODEL=kept\n", encoding="utf-8")
    with pytest.raises(EnvFileError) as error:
        update_env_file(env, {field: value})
    assert "fakekey-" not in str(error.value)  # the key's value is never echoed
    assert env.read_text(encoding="utf-8") == "OPENAI_MODEL=kept\n"
    assert [p.name for p in tmp_path.iterdir()] == [".env"]  # no temporary file left behind


def test_a_paid_provider_needs_a_key_and_a_local_one_gets_a_placeholder(tmp_path: Path) -> None:
    report = controller(tmp_path, preset="openai", url="", key="").save()
    assert not report.ok and "нужен ключ" in str(report)
    assert not (tmp_path / ".env").exists()
    assert controller(tmp_path, preset="ollama", url="http://localhost:11434/v1", key="").save().ok
    assert read_env(tmp_path / ".env")["OPENAI_API_KEY"] == "not-needed"


def test_offline_preset_writes_only_the_backend(tmp_path: Path) -> None:
    controller(tmp_path).save()
    c = SettingsController(tmp_path / ".env", environ={})
    c.choose("offline")
    assert c.save().ok
    assert read_env(tmp_path / ".env")["LLM_BACKEND"] == "offline"
    assert read_env(tmp_path / ".env")["OPENAI_API_KEY"] == KEY  # untouched, not deleted


def test_environment_overrides_are_named_without_the_key(tmp_path: Path) -> None:
    c = SettingsController(tmp_path / ".env", environ={"LLM_BACKEND": "offline", "OPENAI_API_KEY": "fake-env-key-secret",
                                                       "COURSE_DOTENV": "0"})
    c.choose("lmstudio")
    c.base_url, c.model, c.key = UNREACHABLE, "m", KEY
    text = str(c.save())
    assert "LLM_BACKEND=offline" in text and "COURSE_DOTENV=0" in text and "OPENAI_API_KEY(задан)" in text
    assert "fake-env-key-secret" not in text and KEY not in text


def test_validate_strips_and_accepts_the_presets() -> None:
    assert validate({"OPENAI_BASE_URL": " https://api.proxyapi.ru/openai/v1 ", "OPENAI_MODEL": "qwen2.5:7b"}) == {
        "OPENAI_BASE_URL": "https://api.proxyapi.ru/openai/v1", "OPENAI_MODEL": "qwen2.5:7b"}


# --- the connection check ----------------------------------------------------------------------

def test_check_makes_one_real_call_with_the_panel_values(tmp_path: Path, fake: FakeOpenAI, model_url: str) -> None:
    report = controller(tmp_path, url=model_url).check()
    assert report.ok and "готово" in str(report) and KEY not in str(report)
    assert len(fake.calls) == 1
    call = fake.calls[0]
    assert call["auth"] == f"Bearer {KEY}" and call["body"]["model"] == "fake-model"
    assert call["body"]["messages"][0]["role"] == "system" and call["body"]["max_tokens"] <= 16
    assert not (tmp_path / ".env").exists()  # checking saves nothing


@pytest.mark.parametrize("mode, expected", [
    ("auth", "Ключ не принят"),
    ("no-model", "не знает модель «fake-model»"),
])
def test_check_says_what_to_change(tmp_path: Path, fake: FakeOpenAI, model_url: str, mode: str, expected: str) -> None:
    fake.mode = mode
    report = controller(tmp_path, url=model_url).check()
    assert not report.ok and expected in str(report) and KEY not in str(report)


def test_check_suggests_the_system_role_when_the_server_refuses_developer(tmp_path: Path, fake: FakeOpenAI, model_url: str) -> None:
    fake.mode = "system-only"
    c = controller(tmp_path, url=model_url)
    c.instruction_role = "developer"
    report = c.check()
    assert report.ok and "«Роль инструкции» = system" in str(report)


def test_check_of_an_unreachable_server(tmp_path: Path) -> None:
    report = controller(tmp_path).check()
    assert not report.ok
    assert "Не удалось подключиться к http://127.0.0.1:9/v1" in str(report) and "запустите" in str(report)


def test_offline_needs_no_check(tmp_path: Path) -> None:
    c = SettingsController(tmp_path / ".env", environ={})
    c.choose("offline")
    assert c.check().ok and "проверять нечего" in str(c.check())


def test_check_connection_never_mentions_the_key(fake: FakeOpenAI, model_url: str) -> None:
    from course_lib.config import Settings

    fake.mode = "auth"
    settings = Settings(_env_file=None, llm_backend="openai", openai_api_key=KEY, openai_base_url=model_url)
    assert KEY not in str(check_connection(settings))


# --- widget and text fallback ------------------------------------------------------------------

def test_panel_widget_drives_the_controller(tmp_path: Path, model_url: str) -> None:
    panel = show_settings_panel(tmp_path / ".env")
    panel.provider.value = "llamacpp"
    assert panel.base_url.value == "http://localhost:8080/v1" and panel.role.value == "system"
    panel.base_url.value, panel.model.value, panel.key.value = model_url, "fake-model", KEY
    panel.check_button.click()
    assert "Модель ответила" in panel.report.value and KEY not in panel.report.value
    panel.save_button.click()
    assert "Сохранено" in panel.report.value and panel.key.value == ""
    assert stat.S_IMODE((tmp_path / ".env").stat().st_mode) == 0o600
    assert KEY not in repr(panel) and "configure_model_in_text" in repr(panel)
    panel.provider.value = "offline"
    assert panel.model.disabled and panel.key.disabled


def test_text_fallback_asks_and_saves(tmp_path: Path, model_url: str) -> None:
    answers = iter(["4", model_url, "fake-model", "", "y"])  # LM Studio, URL, model, role (default)
    said: list[str] = []
    report = configure_model_in_text(tmp_path / ".env", ask=lambda _q: next(answers),
                                     ask_secret=lambda _q: KEY, say=said.append)
    assert report.ok and read_env(tmp_path / ".env")["OPENAI_API_KEY"] == KEY
    assert KEY not in "\n".join(said) and any("Модель ответила" in line for line in said)


def test_text_fallback_refuses_a_wrong_number(tmp_path: Path) -> None:
    report = configure_model_in_text(tmp_path / ".env", ask=lambda _q: "9", ask_secret=lambda _q: "", say=lambda _s: None)
    assert not report.ok and not (tmp_path / ".env").exists()


# --- doctor --check ----------------------------------------------------------------------------

def _doctor(*args: str, **env: str) -> subprocess.CompletedProcess:
    import os

    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    environment.update(COURSE_DOTENV="0", **env)
    return subprocess.run([sys.executable, "-m", "course_lib", "doctor", *args], capture_output=True,
                          text=True, env=environment, timeout=120)


def test_doctor_check_reports_an_unreachable_model_and_fails(model_url: str) -> None:
    bad = _doctor("--check", LLM_BACKEND="openai", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=UNREACHABLE,
                  OPENAI_MAX_RETRIES="0")
    assert bad.returncode == 1 and "Не удалось подключиться" in bad.stdout and "LLM_BACKEND=offline" in bad.stdout
    assert KEY not in bad.stdout + bad.stderr
    good = _doctor("--check", LLM_BACKEND="openai", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=model_url,
                   OPENAI_MODEL="fake-model", LLM_INSTRUCTION_ROLE="system")
    assert good.returncode == 0 and "Модель ответила" in good.stdout
    assert _doctor("--chek").returncode == 2
