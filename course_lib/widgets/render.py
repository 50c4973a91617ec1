"""HTML for the widgets, as pure functions of plain data (so tests can read it without a browser).

Every piece of text that came from a user, a model or a summary goes through `esc()`: a message
that contains `<script>` or `</div>` is shown as text and cannot break the page.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from course_lib.russian import messages_count, plural, tokens  # noqa: F401  (re-exported)
from course_lib.widgets.context import (
    DEVELOPER,
    DROPPED,
    HISTORY,
    KIND_LABELS,
    SUMMARIZED,
    SUMMARY,
    TOOL,
    USER,
    ContextEntry,
    ContextView,
)
from course_lib.your_code import COURSE, WHO_RAN

KIND_COLORS = {
    DEVELOPER: "#7f8c8d",
    SUMMARY: "#8e44ad",
    HISTORY: "#2e86de",
    USER: "#27ae60",
    TOOL: "#e67e22",
    DROPPED: "#d35400",
    SUMMARIZED: "#a569bd",
}
OVERHEAD_COLOR = "#bdc3c7"
FREE_COLOR = "#ecf0f1"
ROLE_TITLES = {"user": "Вы", "assistant": "Поддержка"}

_PRE = "margin:2px 0;white-space:pre-wrap;word-break:break-word;font-size:12px;font-family:monospace"
_LONG_TEXT = 240
# ipywidgets' HTML content inherits a 28px line height (the height of an input row); text reads
# better tighter, so every block sets its own.
BLOCK = "line-height:1.4"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def run_hint(subject: str, goal: str) -> str:
    """A widget's text/plain fallback: what a notebook shows before the cell has run (or when the
    widget's model is gone after a kernel restart). Stable, so nbval can compare it; under 110
    characters, where ipywidgets would cut it."""
    return f"▶ {subject}: выполните по порядку ячейки выше и эту (Shift+Enter), {goal}."


# One home for Russian plurals: course_lib.russian (re-exported here for the widgets).
def notice(text: str, tone: str = "info") -> str:
    """A one-line coloured box: tone is "error", "success" or "info"."""
    colors = {
        "error": ("#fdecea", "#c0392b", "⚠ "),
        "success": ("#eafaf1", "#1e8449", ""),
        "info": ("#eef4fb", "#2c3e50", ""),
    }
    background, color, icon = colors[tone]
    return (
        f'<div class="course-notice course-notice-{tone}" style="background:{background};'
        f'color:{color};border-radius:4px;padding:6px 8px;margin:4px 0;{BLOCK}">{icon}{esc(text)}</div>'
    )


def badge(kind: str) -> str:
    return (
        f'<span class="course-badge course-kind-{kind}" style="background:{KIND_COLORS[kind]};'
        'color:white;border-radius:3px;padding:0 5px;font-size:11px;white-space:nowrap">'
        f"{esc(KIND_LABELS[kind])}</span>"
    )


def message_body(content: str) -> str:
    """The exact text of a message; long ones fold under their first line."""
    if len(content) <= _LONG_TEXT and content.count("\n") < 6:
        return f'<pre style="{_PRE}">{esc(content)}</pre>'
    first_line = content.strip().splitlines()[0] if content.strip() else ""
    head = first_line[:90] + ("…" if len(first_line) > 90 else "")
    return (
        f'<details><summary style="cursor:pointer;font-size:12px">{esc(head)} '
        f'<i>(ещё {len(content)} симв.)</i></summary><pre style="{_PRE}">{esc(content)}</pre></details>'
    )


# ---------------------------------------------------------------------------------------------
# The chat


@dataclass(frozen=True)
class TranscriptEntry:
    """One line of the conversation as the student saw it.

    `pending`: a reply still streaming in, or one that broke off and was not saved (`note` says which).
    """

    role: str
    text: str
    pending: bool = False
    note: str = ""


def render_transcript(entries: Sequence[TranscriptEntry]) -> str:
    if not entries:
        return notice("Диалог пуст: напишите первое сообщение.")
    rows = []
    for entry in entries:
        mine = entry.role == "user"
        align = "flex-end" if mine else "flex-start"
        background = "#dff0d8" if mine else "#f4f6f7"
        border = ";border:1px dashed #b9770e;opacity:0.8" if entry.pending else ""
        note = f' <i style="color:#b9770e">— {esc(entry.note)}</i>' if entry.note else ""
        pending_class = " course-msg-pending" if entry.pending else ""
        rows.append(
            f'<div class="course-msg course-msg-{esc(entry.role)}{pending_class}" '
            f'style="display:flex;justify-content:{align};margin:3px 0">'
            f'<div style="max-width:85%;background:{background};border-radius:6px;padding:4px 8px{border}">'
            f'<div style="font-size:11px;color:#555">{esc(ROLE_TITLES.get(entry.role, entry.role))}{note}</div>'
            f'<div style="white-space:pre-wrap;word-break:break-word">{esc(entry.text)}</div>'
            "</div></div>"
        )
    # column-reverse keeps a scrolled box pinned to its bottom: the newest reply stays in view.
    return (
        f'<div class="course-transcript" style="{BLOCK};max-height:340px;overflow-y:auto;'
        f'display:flex;flex-direction:column-reverse"><div>{"".join(rows)}</div></div>'
    )


def render_code_line(implementations: Sequence[tuple[str, str]]) -> str:
    """«Ответ собран: build_chat_messages — ваш код, commit_turn — версия курса» as one small line,
    each implementation coloured; "" when no exercise ran for the reply. The words are
    `course_lib.your_code.used_line`'s, so the console, the chat and the inspector say the same."""
    if not implementations:
        return ""
    pieces = []
    for name, implementation in implementations:
        color = "#b9770e" if implementation == COURSE else "#1e8449"
        pieces.append(f'<code>{esc(name)}</code> — <span class="course-impl-{esc(implementation)}" '
                      f'style="color:{color};font-weight:bold">{esc(WHO_RAN.get(implementation, implementation))}</span>')
    return (f'<div class="course-code-line" style="font-size:12px;color:#333;margin:3px 0;{BLOCK}">'
            f"Ответ собран: {', '.join(pieces)}.</div>")


def render_metrics(lines: Sequence[str]) -> str:
    """The console's metric lines as a two-column table ("Название: значение")."""
    if not lines:
        return ""
    rows = []
    for line in lines:
        name, separator, value = line.partition(": ")
        if separator:
            rows.append(
                f'<tr><td style="padding:0 8px 0 0;color:#555">{esc(name)}</td>'
                f"<td><b>{esc(value)}</b></td></tr>"
            )
        else:
            rows.append(f'<tr><td colspan="2" style="color:#555">{esc(line)}</td></tr>')
    return (
        '<details open class="course-metrics" style="line-height:1.4"><summary style="cursor:pointer">'
        "<b>Метрики последнего ответа</b></summary>"
        f'<table style="font-size:12px;border-collapse:collapse">{"".join(rows)}</table></details>'
    )


# ---------------------------------------------------------------------------------------------
# The context inspector


def render_budget_bar(view: ContextView) -> str:
    """A stacked bar: each kind of message, the reply primer, and the free part of the budget."""
    scale = max(view.budget, view.estimated_tokens, 1)
    parts = [(kind, view.tokens_of(kind), KIND_COLORS[kind], KIND_LABELS[kind]) for kind in
             (DEVELOPER, SUMMARY, HISTORY, USER, TOOL)]
    parts.append(("overhead", view.overhead_tokens, OVERHEAD_COLOR, "начало ответа"))
    parts.append(("free", view.free_tokens, FREE_COLOR, "свободно"))
    segments = []
    for key, amount, color, label in parts:
        if amount <= 0:
            continue
        width = 100.0 * amount / scale
        text = str(amount) if width >= 7 else ""
        text_color = "#555" if key in ("free", "overhead") else "white"
        segments.append(
            f'<div class="course-bar-{key}" title="{esc(label)}: {esc(tokens(amount))}" '
            f'style="width:{width:.2f}%;background:{color};color:{text_color};font-size:11px;'
            f'text-align:center;overflow:hidden;white-space:nowrap">{text}</div>'
        )
    over = view.estimated_tokens > view.budget
    caption = (
        f"Использовано {view.estimated_tokens} из {view.budget} токенов бюджета "
        f"({view.used_percent:.0f}%)"
    )
    if over:
        caption += " — бюджет превышен"
    legend = " ".join(
        f'<span style="white-space:nowrap"><span style="display:inline-block;width:9px;height:9px;'
        f'background:{color};margin-right:3px"></span>{esc(label)}</span>'
        for key, amount, color, label in parts
        if amount > 0
    )
    return (
        f'<div class="course-budget-bar" style="{BLOCK}">'
        f'<div style="display:flex;height:18px;border:1px solid #95a5a6;border-radius:3px;'
        f'overflow:hidden;background:{FREE_COLOR}">{"".join(segments)}</div>'
        f'<div class="course-budget-caption" style="font-size:12px;margin-top:2px">{esc(caption)}</div>'
        f'<div style="font-size:11px;color:#555">{legend}</div></div>'
    )


def _entry_rows(entries: Iterable[ContextEntry], start: int = 1) -> str:
    rows = []
    for number, entry in enumerate(entries, start=start):
        rows.append(
            f'<tr class="course-entry course-entry-{entry.kind}" style="border-top:1px solid #eee;'
            'vertical-align:top">'
            f'<td style="padding:2px 4px;color:#888">{number}</td>'
            f'<td style="padding:2px 4px">{badge(entry.kind)}<br>'
            f'<span style="font-size:11px;color:#555">role: {esc(entry.role)}</span></td>'
            f'<td class="course-entry-tokens" style="padding:2px 4px;text-align:right;white-space:nowrap">'
            f"{entry.tokens}</td>"
            f'<td style="padding:2px 4px;width:100%">{message_body(entry.content)}</td></tr>'
        )
    return "".join(rows)


def _table(rows: str) -> str:
    return (
        '<table style="border-collapse:collapse;width:100%;font-size:12px">'
        '<tr style="color:#555;text-align:left"><th style="padding:2px 4px">#</th>'
        '<th style="padding:2px 4px">пометка</th>'
        '<th style="padding:2px 8px 2px 4px;text-align:right">токены</th>'
        '<th style="padding:2px 4px">текст сообщения</th></tr>'
        f"{rows}</table>"
    )


def render_context(
    view: ContextView | None, *, empty_text: str | None = None, show_summary: bool = True
) -> str:
    """The whole inspector: the bar, the request's messages, what was left out, the summary.

    `show_summary=False` (a service without a summary service) leaves out the summary line, which
    would only ever say "нет" there.
    """
    if view is None:
        return notice(empty_text or "Отправьте сообщение в чате — здесь появится состав запроса к модели.")
    if view.origin == "preview":
        heading = "Запрос, который собрал бы prepare() (модель не вызывалась)"
    else:
        heading = "Последний запрос к модели"
    history = view.count_of(HISTORY)
    left = len(view.left_out)
    facts = [
        f"отправлено {messages_count(len(view.sent))}",
        f"истории в окне: {history}",
        f"не попало в запрос: {left}",
    ]
    if view.prompt_tokens is not None:
        facts.append(f"провайдер насчитал входных токенов: {view.prompt_tokens}")
    parts = [
        f'<div class="course-context course-context-{esc(view.origin)}" style="{BLOCK}">',
        f'<div style="font-weight:bold;margin-bottom:2px">{esc(heading)}</div>',
        render_code_line(view.implementations),
        render_budget_bar(view),
        f'<div style="font-size:12px;color:#333;margin:3px 0">{esc("; ".join(facts))}</div>',
    ]
    if view.summary_updated:
        parts.append(notice(
            "На этом ходу старая история свёрнута в новую сводку: модель получила сводку "
            "вместо точных сообщений.", "success"))
    parts.append(_table(_entry_rows(view.sent)))
    if view.overhead_tokens:
        parts.append(
            f'<div style="font-size:11px;color:#555">+ {esc(tokens(view.overhead_tokens))} '
            "— служебные токены начала ответа модели (входят в оценку).</div>"
        )
    parts.append('<div class="course-left-out" style="margin-top:6px">')
    if view.left_out:
        why = ("свёрнуты в сводку на этом ходу" if view.summary_updated
               else "не поместились в окно и не отправлены")
        parts.append(
            f'<div style="font-weight:bold">Сообщения сессии вне запроса ({left}): {esc(why)}</div>'
        )
        parts.append(_table(_entry_rows(view.left_out)))
    else:
        parts.append('<div style="font-size:12px;color:#555">Все сообщения сессии попали в запрос.</div>')
    parts.append("</div>")
    if not show_summary and not view.summary:
        parts.append("</div>")
        return "".join(parts)
    parts.append('<div class="course-summary" style="margin-top:6px"><b>Текущая сводка:</b> ')
    if view.summary:
        parts.append(
            f'<pre style="{_PRE};background:#f5eef8;padding:4px;border-radius:3px">'
            f"{esc(view.summary)}</pre>"
        )
    else:
        parts.append('<span style="color:#555">нет (сессия ещё не сжималась)</span>')
    parts.append("</div></div>")
    return "".join(parts)
