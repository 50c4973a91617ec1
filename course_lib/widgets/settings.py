"""The model settings panel of notebook 00: connect a real model without touching `.env` by hand.

Lab hides dot-files, so a student cannot open `.env` there. `show_settings_panel()` shows a
provider preset (OpenAI, ProxyAPI, Ollama, LM Studio, llama.cpp, or back to the offline model),
Base URL, model, instruction role and the key in a password field; «Проверить» makes one tiny real
call (`course_lib.model_connection.check_connection`) and says what worked or what to change;
«Сохранить» writes `.env` in the course folder (mode 0600, `course_lib.env_file`) and asks for a
kernel restart. The key is never shown: not in the panel, not in a message, not in a repr.

`SettingsController` holds the logic (tests drive it without a browser); `SettingsPanel` draws it.
Without widgets, `configure_model_in_text()` asks the same questions with input()/getpass.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from course_lib.config import PROJECT_ENV_FILE, Settings
from course_lib.env_file import MANAGED, EnvFileError, read_env, update_env_file, validate
from course_lib.model_connection import (
    LOCAL_KEY_PLACEHOLDER,
    PRESETS,
    ConnectionReport,
    ProviderPreset,
    check_connection,
    get_preset,
)

RESTART_HINT = ("Перезапустите ядро (Kernel → Restart Kernel) и выполните ноутбук заново: "
                "настройки читаются при запуске.")
TEXT_FALLBACK_HINT = ("Панель не появилась? Выполните в ячейке: from course_lib.widgets.settings import "
                      "configure_model_in_text; configure_model_in_text()")


class SettingsController:
    """The panel's state and actions; `env_path` is the course's .env, `environ` the process's."""

    def __init__(self, env_path: Path = PROJECT_ENV_FILE, environ: Mapping[str, str] | None = None) -> None:
        self.env_path = Path(env_path)
        self.environ = os.environ if environ is None else environ
        saved = read_env(self.env_path)
        self.key_saved = bool(saved.get("OPENAI_API_KEY", "").strip())
        self.preset = _guess_preset(saved)
        self.base_url = saved.get("OPENAI_BASE_URL", self.preset.base_url)
        self.model = saved.get("OPENAI_MODEL", "") or self.preset.model
        self.instruction_role = saved.get("LLM_INSTRUCTION_ROLE", "") or self.preset.instruction_role
        self.key = ""  # typed in this session only; the saved key is never read back into the panel

    # --- editing ---------------------------------------------------------------------------

    def choose(self, preset_key: str) -> ProviderPreset:
        self.preset = get_preset(preset_key)
        self.base_url = self.preset.base_url
        self.model = self.preset.model
        self.instruction_role = self.preset.instruction_role
        return self.preset

    @property
    def offline(self) -> bool:
        return self.preset.key == "offline"

    def values(self) -> dict[str, str]:
        """What «Сохранить» writes (validated). The key: typed, else the saved one stays."""
        if self.offline:
            return validate({"LLM_BACKEND": "offline"})
        values = {
            "LLM_BACKEND": "auto",
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_MODEL": self.model,
            "LLM_INSTRUCTION_ROLE": self.instruction_role,
        }
        key = self.key.strip()
        if key:
            values["OPENAI_API_KEY"] = key
        elif not self.key_saved:
            if self.preset.needs_key:
                raise EnvFileError(f"Для {self.preset.label} нужен ключ API: вставьте его в поле «Ключ».")
            values["OPENAI_API_KEY"] = LOCAL_KEY_PLACEHOLDER
        if not values["OPENAI_MODEL"].strip():
            raise EnvFileError("Укажите модель (OPENAI_MODEL): для LM Studio — id загруженной модели.")
        return validate(values)

    def settings(self) -> Settings:
        """Settings for the check: exactly the panel's values (not the environment's, not .env's)."""
        values = self.values()
        key = values.get("OPENAI_API_KEY")
        if key is None and self.key_saved:
            key = read_env(self.env_path).get("OPENAI_API_KEY", "")
        return Settings(
            _env_file=None,
            llm_backend="offline" if self.offline else "openai",
            openai_api_key=key or None,
            openai_base_url=values.get("OPENAI_BASE_URL") or None,
            model=values.get("OPENAI_MODEL") or "gpt-4.1",
            instruction_role=values.get("LLM_INSTRUCTION_ROLE", "developer"),
        )

    # --- the two buttons --------------------------------------------------------------------

    def check(self) -> ConnectionReport:
        try:
            settings = self.settings()
        except (EnvFileError, ValueError) as error:
            return ConnectionReport(False, (f"✘ {_first_line(error)}",))
        return check_connection(settings)

    def save(self) -> ConnectionReport:
        try:
            values = self.values()
            update_env_file(self.env_path, values)
        except EnvFileError as error:
            return ConnectionReport(False, (f"✘ Не сохранено: {error}",))
        except OSError as error:
            return ConnectionReport(False, (f"✘ Не удалось записать {self.env_path}: {error.strerror}.",))
        if "OPENAI_API_KEY" in values:
            self.key_saved = True
        self.key = ""
        if self.offline:
            what = "офлайн-модель (LLM_BACKEND=offline)"
        else:
            what = (f"{self.preset.label}: модель {values['OPENAI_MODEL']}, адрес "
                    f"{values['OPENAI_BASE_URL'] or 'api.openai.com'}, роль {values['LLM_INSTRUCTION_ROLE']}, "
                    "ключ сохранён (не показывается)")
        lines = [f"✔ Сохранено в {self.env_path} (доступ только у вас, права 0600): {what}.", RESTART_HINT]
        lines += self.overrides(values)
        return ConnectionReport(True, tuple(lines))

    def overrides(self, values: Mapping[str, str]) -> list[str]:
        """Environment variables that win over .env (set when Lab was started)."""
        notes = []
        if self.environ.get("COURSE_DOTENV") == "0":
            notes.append("Внимание: Lab запущен с COURSE_DOTENV=0, и .env сейчас не читается; "
                         "запустите Lab без этой переменной.")
        for name in MANAGED:
            if name in self.environ and name in values and self.environ[name] != values[name]:
                shown = "(задан)" if name == "OPENAI_API_KEY" else f"={self.environ[name]}"
                notes.append(f"Внимание: переменная окружения {name}{shown} задана при запуске Lab и "
                             "важнее .env; перезапустите Lab без неё.")
        return notes


def _guess_preset(saved: Mapping[str, str]) -> ProviderPreset:
    if saved.get("LLM_BACKEND") == "offline" or not saved.get("OPENAI_API_KEY", "").strip():
        return get_preset("offline")
    url = saved.get("OPENAI_BASE_URL", "").strip().rstrip("/")
    for preset in PRESETS:
        if preset.key != "offline" and preset.base_url.rstrip("/") == url:
            return preset
    return get_preset("openai")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# --- the widget ---------------------------------------------------------------------------------

def _report_html(report: ConnectionReport) -> str:
    from course_lib.widgets.render import esc

    tone = ("#eafaf1", "#1e8449") if report.ok else ("#fdecea", "#c0392b")
    body = "".join(f"<div>{esc(line)}</div>" for line in report.lines)
    return (f'<div class="course-settings-result course-settings-{"ok" if report.ok else "fail"}" '
            f'style="background:{tone[0]};color:{tone[1]};border-radius:4px;padding:6px 8px;'
            f'margin:4px 0;line-height:1.4">{body}</div>')


def _make_panel_class() -> type:
    import ipywidgets as widgets

    from course_lib.widgets.render import esc, notice

    class SettingsPanel(widgets.VBox):
        """Preset, Base URL, model, role, key; «Проверить» and «Сохранить»."""

        def __init__(self, controller: SettingsController | None = None) -> None:
            self.controller = controller or SettingsController()
            c = self.controller
            wide = widgets.Layout(width="520px")
            style = {"description_width": "130px"}
            self.provider = widgets.Dropdown(options=[(p.label, p.key) for p in PRESETS], value=c.preset.key,
                                             description="Провайдер", layout=wide, style=style)
            self.base_url = widgets.Text(value=c.base_url, description="Base URL", layout=wide, style=style,
                                         placeholder="пусто — OpenAI (api.openai.com)")
            self.model = widgets.Text(value=c.model, description="Модель", layout=wide, style=style)
            self.role = widgets.Dropdown(options=["developer", "system"], value=c.instruction_role,
                                         description="Роль инструкции", layout=wide, style=style)
            self.key = widgets.Password(value="", description="Ключ API", layout=wide, style=style)
            self.hint = widgets.HTML()
            self.check_button = widgets.Button(description="Проверить", icon="plug",
                                               tooltip="Один короткий запрос к модели")
            self.save_button = widgets.Button(description="Сохранить", button_style="primary", icon="save",
                                              tooltip="Записать .env в папке курса")
            self.report = widgets.HTML()
            for name, widget in (("provider", self.provider), ("base_url", self.base_url),
                                 ("model", self.model), ("role", self.role), ("key", self.key),
                                 ("check", self.check_button), ("save", self.save_button),
                                 ("report", self.report)):
                widget.add_class(f"course-settings-{name}")
            self.provider.observe(self._on_provider, names="value")
            self.check_button.on_click(lambda _b: self._run(self.controller.check, "Проверяю: один короткий запрос…"))
            self.save_button.on_click(lambda _b: self._run(self.controller.save, "Сохраняю…"))
            super().__init__([widgets.HTML("<b>Подключение модели</b>"), self.provider, self.base_url,
                              self.model, self.role, self.key, self.hint,
                              widgets.HBox([self.check_button, self.save_button]), self.report])
            self.add_class("course-settings")
            self._esc, self._notice = esc, notice
            self._refresh_hint()

        def __repr__(self) -> str:
            return f"▶ Панель настроек модели: выполните эту ячейку (Shift+Enter). {TEXT_FALLBACK_HINT}"

        def _on_provider(self, change: dict[str, Any]) -> None:
            preset = self.controller.choose(change["new"])
            self.base_url.value, self.model.value, self.role.value = (
                preset.base_url, preset.model, preset.instruction_role)
            self.report.value = ""
            self._refresh_hint()

        def _refresh_hint(self) -> None:
            c = self.controller
            offline = c.offline
            for widget in (self.base_url, self.model, self.role, self.key):
                widget.disabled = offline
            key_note = ""
            if not offline:
                if c.key_saved:
                    key_note = " Ключ уже сохранён в .env (не показывается): оставьте поле пустым, чтобы не менять."
                elif not c.preset.needs_key:
                    key_note = " Поле ключа можно оставить пустым."
            self.hint.value = (f'<div class="course-settings-hint" style="font-size:12px;color:#555;'
                               f'margin:2px 0 4px 136px">{self._esc(c.preset.hint + key_note)}</div>')

        def _sync(self) -> None:
            c = self.controller
            c.base_url, c.model, c.instruction_role, c.key = (
                self.base_url.value, self.model.value, self.role.value, self.key.value)

        def _run(self, action: Callable[[], ConnectionReport], busy: str) -> None:
            self._sync()
            self.check_button.disabled = self.save_button.disabled = True
            self.report.value = self._notice(busy)
            try:
                report = action()
            except Exception as error:  # noqa: BLE001 - the panel is the boundary: say it, do not raise
                report = ConnectionReport(False, (f"✘ Непредвиденная ошибка ({type(error).__name__}).",))
            finally:
                self.check_button.disabled = self.save_button.disabled = False
            if action == self.controller.save and report.ok:
                self.key.value = ""  # the key leaves the browser's memory once it is in .env
            self.report.value = _report_html(report)
            self._refresh_hint()

    return SettingsPanel


def show_settings_panel(env_path: Path = PROJECT_ENV_FILE) -> Any:
    """The panel as a widget (the last line of a cell shows it); the text dialog without ipywidgets."""
    controller = SettingsController(env_path)
    try:
        panel_class = _make_panel_class()
    except ImportError:
        print("Виджеты недоступны (нет ipywidgets): задаю вопросы текстом.")
        return configure_model_in_text(env_path)
    return panel_class(controller)


def configure_model_in_text(
    env_path: Path = PROJECT_ENV_FILE,
    ask: Callable[[str], str] = input,
    ask_secret: Callable[[str], str] | None = None,
    say: Callable[[str], None] = print,
) -> ConnectionReport:
    """The panel without widgets: the same questions in text; the key is read with getpass."""
    if ask_secret is None:
        from getpass import getpass as ask_secret
    controller = SettingsController(env_path)
    say("Провайдеры: " + ", ".join(f"{n}) {p.label}" for n, p in enumerate(PRESETS, 1)))
    choice = ask(f"Номер провайдера [{PRESETS.index(controller.preset) + 1}]: ").strip()
    if choice:
        if not choice.isdigit() or not 1 <= int(choice) <= len(PRESETS):
            report = ConnectionReport(False, (f"✘ Нет провайдера с номером {choice!r}: ничего не изменено.",))
            say(str(report))
            return report
        controller.choose(PRESETS[int(choice) - 1].key)
    if not controller.offline:
        say(controller.preset.hint)
        controller.base_url = ask(f"Base URL [{controller.base_url or 'OpenAI'}]: ").strip() or controller.base_url
        controller.model = ask(f"Модель [{controller.model}]: ").strip() or controller.model
        role = ask(f"Роль инструкции developer/system [{controller.instruction_role}]: ").strip()
        controller.instruction_role = role or controller.instruction_role
        note = " (Enter — оставить сохранённый)" if controller.key_saved else ""
        controller.key = ask_secret(f"Ключ API{note}, не отображается при вводе: ")
        report = controller.check()
        say(str(report))
        if not report.ok and ask("Сохранить всё равно? [y/N]: ").strip().lower() not in ("y", "yes", "д", "да"):
            say("Ничего не сохранено.")
            return report
    report = controller.save()
    say(str(report))
    return report
