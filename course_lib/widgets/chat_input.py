"""The chat's message box: Enter sends, Shift+Enter adds a line.

ipywidgets' Textarea cannot tell Enter from Shift+Enter (both just insert a newline), so the box is
a tiny anywidget: a plain <textarea> whose keydown handler sends a "submit" message to Python on
Enter. Python decides what sending means (`on_submit` callbacks); `submit()` does exactly what
Enter does, so tests drive the box without a browser.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

SubmitHandler = Callable[["ChatInput"], None]

# Runs in the browser. Enter while an IME is composing (e.g. choosing a word) is left alone.
# The keydown never bubbles to JupyterLab, whose Shift+Enter would run the cell instead.
_ESM = r"""
// After a kernel restart the widget manager marks every widget view of the old kernel with
// .jupyter-widgets-disconnected (and fires comm_live_update); the chat stays on screen but nothing
// reaches Python any more. Say so in the chat itself, in Russian, and stop pretending to accept input.
const DEAD_TEXT = "Ядро Python перезапущено: этот чат остался от прежнего ядра и больше не отвечает. " +
  "Выполните ячейки выше (Run → Run All Above Selected Cell), затем ячейку с чатом ещё раз (Shift+Enter).";

function isDead(el) {
  return Boolean(el.closest(".jupyter-widgets-disconnected"));
}

function showDead(el, box) {
  const chat = el.closest(".course-chat") ?? el.parentElement ?? el;
  box.disabled = true;
  box.placeholder = "Чат отключён: ядро перезапущено";
  if (chat.querySelector(":scope > .course-chat-dead")) return;
  const banner = document.createElement("div");
  banner.className = "course-chat-dead";
  banner.setAttribute("role", "alert");
  banner.textContent = DEAD_TEXT;
  chat.prepend(banner);
}

function watchKernel(model, el, box) {
  const check = () => { if (isDead(el)) showDead(el, box); };
  model.on("comm_live_update", () => setTimeout(check, 0));
  // The class may land on an ancestor (the chat's VBox) first: watch the chat's subtree attributes.
  const observer = new MutationObserver(check);
  const start = () => {
    const chat = el.closest(".course-chat");
    observer.observe(chat ?? el, { attributes: true, attributeFilter: ["class"], subtree: true });
    check();
  };
  setTimeout(start, 0);
}

function render({ model, el }) {
  const box = document.createElement("textarea");
  box.className = "course-chat-textarea";
  box.rows = model.get("rows");
  box.placeholder = model.get("placeholder");
  box.value = model.get("value");
  box.disabled = model.get("disabled");
  box.setAttribute("aria-label", model.get("placeholder"));
  el.setAttribute("data-lm-suppress-shortcuts", "true");

  // The text goes to Python on Enter and when the box loses focus (before a button click), not on
  // every keystroke: the kernel echoes each update back, and a late echo of an older value would
  // overwrite what the student has typed since. Our own value coming back is ignored for the same
  // reason; a value Python sets (the empty box after a reply) is shown.
  let sent = box.value;
  const push = () => {
    sent = box.value;
    if (model.get("value") !== sent) {
      model.set("value", sent);
      model.save_changes();
    }
  };
  box.addEventListener("change", push);
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
    event.stopPropagation();
    event.preventDefault();
    if (isDead(el)) { showDead(el, box); return; }
    if (event.shiftKey) {
      // JupyterLab cancels a line break typed anywhere inside a cell (its Shift+Enter runs the
      // cell), so the box inserts it itself; execCommand keeps the browser's undo history.
      if (!document.execCommand("insertText", false, "\n")) {
        box.setRangeText("\n", box.selectionStart, box.selectionEnd, "end");
      }
      return;
    }
    push();
    model.send({ type: "submit", value: box.value });
  });
  model.on("change:value", () => {
    const value = model.get("value");
    if (value !== sent) {
      box.value = value;
      sent = value;
    }
  });
  model.on("change:disabled", () => { box.disabled = model.get("disabled"); });
  watchKernel(model, el, box);
  model.on("change:placeholder", () => { box.placeholder = model.get("placeholder"); });
  el.appendChild(box);
}
export default { render };
"""

_CSS = """
.course-chat-textarea {
  width: 100%; box-sizing: border-box; resize: vertical; min-height: 3.2em;
  font: inherit; font-size: var(--jp-content-font-size1, 14px); line-height: 1.4;
  padding: 4px 6px; border: 1px solid #9e9e9e; border-radius: 2px;
  color: var(--jp-content-font-color1, #222); background: var(--jp-layout-color1, #fff);
}
.course-chat-textarea:focus { outline: 2px solid #2e86de; outline-offset: -1px; }
.course-chat-dead {
  background: #fdecea; color: #c0392b; border-left: 4px solid #c0392b; border-radius: 2px;
  padding: 6px 8px; margin: 4px 0; line-height: 1.4; font-weight: bold;
}
"""


class ChatInput(anywidget.AnyWidget):
    """A message box that sends on Enter. `on_submit(callback)`; `value` is the current text."""

    _esm = _ESM
    _css = _CSS

    value = traitlets.Unicode("").tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)
    rows = traitlets.Int(2).tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._submit_handlers: list[SubmitHandler] = []
        self.on_msg(self._on_message)

    def __repr__(self) -> str:  # the default repr lists every trait; keep text/plain short
        return "ChatInput(поле сообщения)"

    def on_submit(self, handler: SubmitHandler) -> None:
        """Call `handler(box)` when the student presses Enter."""
        self._submit_handlers.append(handler)

    def submit(self, text: str | None = None) -> None:
        """What Enter does: take `text` (default: the current value) and call the handlers."""
        if text is not None:
            self.value = text
        if self.disabled:
            return  # a reply is still on its way
        for handler in list(self._submit_handlers):
            handler(self)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "submit":
            self.submit(str(content.get("value", "")))
