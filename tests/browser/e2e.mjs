// A student's session in real JupyterLab, driven through Debian's Chromium.
//
// Started by test_browser_e2e.py, which runs `make lab` on a copy of the course and passes, in the
// environment: JUPYTER_URL (http://127.0.0.1:PORT), JUPYTER_TOKEN, NOTEBOOK (the demo notebook's
// path under the course folder), EXERCISE (the exercise file's path), SOLUTION (the text to paste
// into it), QUIZ_ANSWERS (where the demo quizzes show their correct options), ARTIFACTS_DIR
// (screenshots), CHROMIUM (the browser binary), SETTINGS_NOTEBOOK (a scratch notebook with the model
// settings panel), SECRET_KEY (the key typed into the panel; it must never be shown), FAKE_MODEL_URL
// (an OpenAI-compatible server the test runs), UNREACHABLE_URL (nothing listens there). Exit code 0
// means every step passed; on failure a screenshot of the page is saved as failure.png.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
};
const base = env("JUPYTER_URL");
const token = env("JUPYTER_TOKEN");
const notebook = env("NOTEBOOK");
const exercise = env("EXERCISE");
const solution = env("SOLUTION");
const answers = JSON.parse(env("QUIZ_ANSWERS"));
const artifacts = env("ARTIFACTS_DIR");
const executablePath = env("CHROMIUM");
const settingsNotebook = env("SETTINGS_NOTEBOOK");
const secretKey = env("SECRET_KEY");
const fakeModelUrl = env("FAKE_MODEL_URL");
const unreachableUrl = env("UNREACHABLE_URL");
const SETUP = "notebooks/00_setup.ipynb";
mkdirSync(artifacts, { recursive: true });

const started = Date.now();
const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
  log(`ok: ${message}`);
}
const shot = (name) => join(artifacts, name);

const browser = await chromium.launch({
  executablePath,
  headless: true,
  // Playwright adds --headless and a fresh temporary --user-data-dir (a new profile every run).
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",
  ],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
page.setDefaultTimeout(30_000);
page.on("pageerror", (error) => console.log(`page error: ${error.message}`));

const MESSAGE = "На самом мониторе повреждений нет.";
const RECALL = "Напомните номер заказа и что именно было повреждено.";

const currentPath = () => page.evaluate(() => window.jupyterapp.shell.currentWidget?.context?.path);

async function openPath(path) {
  await page.evaluate(async (p) => { await window.jupyterapp.commands.execute("docmanager:open", { path: p }); }, path);
  await page.waitForFunction((p) => window.jupyterapp.shell.currentWidget?.context?.path === p, path);
}

async function fileBrowserNames() {
  return (await page.locator(".jp-FileBrowser .jp-DirListing-itemText").allInnerTexts()).map((t) => t.trim());
}

async function openFromFileBrowser(name) {
  const item = page.locator(".jp-FileBrowser .jp-DirListing-item").filter({
    has: page.locator(".jp-DirListing-itemText", { hasText: new RegExp(`^\\s*${name.replace(".", "\\.")}\\s*$`) }),
  });
  await item.waitFor();
  await item.dblclick();
}

// The inspector is a separate widget: it is redrawn just after the transcript, so wait for it.
async function inspectorShows(text) {
  await page.waitForFunction(
    (t) => document.querySelector(".course-inspector-body")?.innerText.includes(t), text, { timeout: 10_000 });
  return page.locator(".course-inspector-body").innerText();
}

async function sendWithEnter(text) {
  const assistant = page.locator(".course-chat-transcript .course-msg-assistant");
  const before = await assistant.count();
  const input = page.locator(".course-chat-input textarea");
  await input.fill(text);
  await input.press("Enter");
  // The reply streams in ("печатает…"); it is final once no message is pending any more.
  await page.waitForFunction(
    ([selector, count]) =>
      document.querySelectorAll(selector).length > count &&
      !document.querySelector(".course-chat-transcript .course-msg-pending"),
    [".course-chat-transcript .course-msg-assistant", before],
    { timeout: 30_000 },
  );
  const reply = (await assistant.last().innerText()).trim();
  check(!reply.includes("печатает…"), "the saved reply is no longer marked as streaming");
  log(`reply to «${text}»: ${reply.replace(/\s+/g, " ")}`);
  return reply;
}

try {
  log(`browser ${browser.version()}`);

  // --- make lab: 00_setup open, the file browser at the course folder, no pop-ups -------------
  await page.goto(`${base}/lab?token=${token}`);
  await page.waitForFunction(() => window.jupyterapp?.shell?.currentWidget?.context?.path !== undefined,
    null, { timeout: 60_000 });
  check((await currentPath()) === "notebooks/00_setup.ipynb", "Lab opens notebooks/00_setup.ipynb");
  await page.waitForFunction(
    () => [...document.querySelectorAll(".jp-FileBrowser .jp-DirListing-itemText")]
      .some((e) => e.textContent.trim() === "exercises"),
  );
  const rootNames = await fileBrowserNames();
  check(rootNames.includes("notebooks") && rootNames.includes("exercises"),
    `the file browser shows notebooks/ and exercises/: ${rootNames.join(", ")}`);
  await page.waitForTimeout(3000); // the news toast, when enabled, shows up within a second or two
  check((await page.locator(".Toastify__toast, .jp-Notification-Toast").count()) === 0,
    "no news or update pop-up");
  await page.screenshot({ path: shot("00-lab-start.png") });

  // --- The exercise, opened from the file browser ---------------------------------------------
  await openFromFileBrowser("exercises");
  await openFromFileBrowser(exercise.split("/").pop());
  await page.waitForFunction((p) => window.jupyterapp.shell.currentWidget?.context?.path === p, exercise);
  const editor = page.locator(".jp-FileEditor .cm-content").first();
  await editor.waitFor();
  // The editor is attached before the file's text arrives (slow on a loaded machine): wait for it.
  await page.waitForFunction(
    () => document.querySelector(".jp-FileEditor .cm-content")?.innerText.includes("NotImplementedError"),
    null, { timeout: 30_000 }).catch(() => {});
  check((await editor.innerText()).includes("NotImplementedError"), "the exercise opens in Lab's editor");
  await page.screenshot({ path: shot("01-exercise-open.png") });

  // --- The demo notebook: stored outputs first, then Run All ----------------------------------
  await page.setViewportSize({ width: 1500, height: 2200 });
  await openPath(notebook);
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
  });
  log("notebook open, kernel ready");
  const fallback = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output",
    { hasText: "▶ Вопрос для самопроверки" }).first();
  await fallback.waitFor({ state: "attached" });
  await fallback.scrollIntoViewIfNeeded();
  check(true, "before running, a quiz's output says what to do");
  await page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").screenshot({ path: shot("02-demo-before-run.png") });

  await page.evaluate(async () => { await window.jupyterapp.commands.execute("notebook:run-all-cells"); });
  await page.locator(".course-chat").waitFor({ timeout: 60_000 });
  await page.locator(".course-quiz").nth(1).waitFor({ timeout: 30_000 });
  const report = page.locator(".course-check");
  await page.waitForFunction(() => document.querySelector(".course-check")?.textContent.includes("Открытые тесты"));
  let reportText = await report.textContent();
  check(reportText.includes("✘") && reportText.includes("пройдено 0 из"), "check() reports the stub as failing");
  await report.screenshot({ path: shot("03-check-failing.png") });

  // --- Paste the solution into Lab's editor, save ---------------------------------------------
  await openPath(exercise);
  await editor.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(solution);
  await page.evaluate(async () => { await window.jupyterapp.commands.execute("docmanager:save"); });
  await page.waitForFunction(() => window.jupyterapp.shell.currentWidget?.context?.model?.dirty === false);
  const saved = await fetch(`${base}/api/contents/${exercise}?content=1`, {
    headers: { Authorization: `token ${token}` },
  }).then((response) => response.json());
  check(saved.content.trim() === solution.trim(), "the edited exercise was saved exactly as pasted");
  await page.screenshot({ path: shot("03b-exercise-saved.png") });

  // --- Run check() again: it passes now ---------------------------------------------------------
  await openPath(notebook);
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    const index = panel.content.widgets.findIndex((cell) => cell.model.sharedModel.getSource().includes("check("));
    panel.content.activeCellIndex = index;
    await window.jupyterapp.commands.execute("notebook:run-cell");
  });
  await page.waitForFunction(() => document.querySelector(".course-check")?.textContent.includes("Все открытые тесты пройдены"));
  reportText = await report.textContent();
  check(reportText.includes("✔ пройден") && !reportText.includes("✘"), "after the edit check() passes, marked ✔");
  await report.screenshot({ path: shot("04-check-passing.png") });

  // --- The chat: Shift+Enter is a new line, Enter sends ----------------------------------------
  const transcript = page.locator(".course-chat-transcript");
  check((await transcript.innerText()).includes("Фото повреждения уже сделал."),
    "the chat continues the session: its stored messages are shown");
  check((await page.locator(".course-session-id").innerText()).trim() === "demo", "the Session ID is shown");
  const inspector = page.locator(".course-inspector-body");
  check((await inspector.innerText()).includes("Отправьте сообщение"), "the inspector waits for a reply");

  const input = page.locator(".course-chat-input textarea");
  const assistantCount = await page.locator(".course-msg-assistant").count();
  await input.fill("Первая строка");
  await input.press("Shift+Enter");
  await input.pressSequentially("вторая строка");
  await page.waitForTimeout(800);
  const typed = await input.inputValue();
  check(typed === "Первая строка\nвторая строка", `Shift+Enter adds a line: ${JSON.stringify(typed)}`);
  check((await page.locator(".course-msg-assistant").count()) === assistantCount
    && (await page.locator(".course-chat").count()) === 1, "Shift+Enter neither sends nor re-runs the cell");
  await input.fill("");

  await sendWithEnter(MESSAGE);
  // The box is emptied right after the reply is drawn (a separate update from the kernel).
  await page.waitForFunction(() => document.querySelector(".course-chat-input textarea")?.value === "",
    null, { timeout: 10_000 });
  check(true, "Enter sent the message and emptied the box");
  let text = await inspectorShows(MESSAGE);
  check(text.includes("Последний запрос к модели"), "the inspector shows the last request");
  check(text.includes(MESSAGE) && text.includes("новое сообщение"), "the new user message is marked");
  check(/Использовано \d+ из 300 токенов бюджета/.test(text), "the budget bar reads used of 300");
  check(text.includes("developer-инструкция"), "the developer message is marked");
  check(/токены\s+текст сообщения/.test(text), "the inspector's header columns are apart");
  check(
    (await page.locator(".course-chat-metrics").innerText()).includes("Оценка входных токенов до запроса"),
    "the console metrics are shown after the reply",
  );
  await page.locator(".course-chat-panel").screenshot({ path: shot("05-chat-enter.png") });

  const recall = await sendWithEnter(RECALL);
  check(recall.includes("7718"), "the recall reply still knows order 7718");
  text = await inspectorShows(RECALL);
  check(text.includes(RECALL), "the inspector shows the recall request");
  check(text.includes("summary") && !text.includes("нет (сессия ещё не сжималась)"), "a summary is stored");
  await page.locator(".course-chat-panel").screenshot({ path: shot("06-chat-after-recall.png") });

  // --- The budget slider: drag it to the minimum, turns fall out, no model call -----------------
  const budgetSummary = page.locator(".course-budget-summary");
  const metricsBefore = await page.locator(".course-chat-metrics").innerText();
  const handle = page.locator(".course-budget-slider .noUi-handle");
  const track = page.locator(".course-budget-slider .noUi-base");
  const box = await track.boundingBox();
  const knob = await handle.boundingBox();
  await page.mouse.move(knob.x + knob.width / 2, knob.y + knob.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x - 40, knob.y + knob.height / 2, { steps: 8 });
  await page.mouse.up();
  await page.waitForFunction(
    () => /в окне ходов: 0 из [1-9]/.test(document.querySelector(".course-budget-summary")?.innerText ?? ""),
    null,
    { timeout: 15_000 },
  );
  check(true, `at the minimum budget no turn fits: ${(await budgetSummary.innerText()).trim()}`);
  check(
    (await page.locator(".course-budget-body").innerText()).includes("не поместились в окно"),
    "the explorer lists the turns that fell out",
  );
  check(
    (await page.locator(".course-chat-metrics").innerText()) === metricsBefore,
    "moving the slider did not call the model",
  );
  await page.locator(".course-chat-panel").screenshot({ path: shot("07-budget-minimum.png") });

  // --- The quizzes: the answer is not the first option ------------------------------------------
  const single = page.locator(`.course-quiz-id-${answers.single.id}`);
  await single.scrollIntoViewIfNeeded();
  const radius = await single.locator(".course-quiz-option-0 input").evaluate((el) => getComputedStyle(el).borderRadius);
  check(radius === "50%", `single choice looks like radio buttons (border-radius ${radius})`);
  const [right] = answers.single.correct;
  check(right !== 0, `the correct option is shown at position ${right + 1}, not first`);
  await single.locator(`.course-quiz-option-0 input[type=checkbox]`).click();
  await single.locator(".course-quiz-verdict").waitFor();
  check((await single.locator(".course-quiz-feedback").innerText()).includes("Неверно"), "the first option is wrong: Неверно");
  await single.locator(`.course-quiz-option-${right} input[type=checkbox]`).click();
  await page.waitForFunction(
    (id) => document.querySelector(`.course-quiz-id-${id} .course-quiz-verdict`)?.innerText.includes("Верно!"),
    answers.single.id,
  );
  check((await single.locator(".course-quiz-feedback").innerText()).includes("Пояснение"),
    "the right pick says Верно! and explains");
  await single.screenshot({ path: shot("08-quiz-single.png") });

  const multiple = page.locator(`.course-quiz-id-${answers.multiple.id}`);
  await multiple.scrollIntoViewIfNeeded();
  await multiple.locator(`.course-quiz-option-${answers.multiple.correct[0]} input[type=checkbox]`).click();
  await multiple.locator(`.course-quiz-option-${answers.multiple.wrong[0]} input[type=checkbox]`).click();
  await multiple.locator("button.course-quiz-check").click();
  await multiple.locator(".course-quiz-verdict").waitFor();
  check((await multiple.locator(".course-quiz-feedback").innerText()).includes("Не совсем"),
    "a partly wrong multiple choice says what is off");
  await multiple.screenshot({ path: shot("09-quiz-multiple.png") });

  // --- Kernel restart: the chat of the old kernel says so, in Russian ---------------------------
  await openPath(notebook);
  await page.evaluate(async () => {
    await window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart();
  });
  const dead = page.locator(".course-chat-dead");
  await dead.waitFor({ timeout: 30_000 });
  const deadText = await dead.innerText();
  check(deadText.includes("Ядро Python перезапущено") && deadText.includes("Run All Above Selected Cell"),
    `the dead chat says the kernel restarted and what to run: ${deadText}`);
  check(await page.locator(".course-chat-input textarea").isDisabled(), "the dead chat's box takes no input");
  await dead.scrollIntoViewIfNeeded();
  await page.locator(".course-chat").screenshot({ path: shot("10-chat-after-restart.png") });

  // --- The settings panel: check against a real (fake) server, save an unreachable one ---------
  await openPath(settingsNotebook);
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    await window.jupyterapp.commands.execute("notebook:run-all-cells");
  });
  const settings = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .course-settings");
  await settings.waitFor({ timeout: 60_000 });
  await settings.locator(".course-settings-provider select").selectOption({ label: "LM Studio" });
  // The preset fills the fields one by one through the kernel: wait for the last one, not the first.
  const presetFilled = await page.waitForFunction(
    () => document.querySelector(".course-settings-base_url input")?.value === "http://localhost:1234/v1"
      && document.querySelector(".course-settings-role select")?.value === "system",
    null, { timeout: 20_000 }).then(() => true, () => false);
  check(presetFilled, "the LM Studio preset fills Base URL and the system role");
  const panelReport = settings.locator(".course-settings-report");
  async function press(button, expected) {
    await settings.locator(`button.course-settings-${button}`).click();
    await page.waitForFunction(
      (text) => document.querySelector(".course-settings-report")?.innerText.includes(text), expected,
      { timeout: 40_000 });
    return (await panelReport.innerText()).trim();
  }
  await settings.locator(".course-settings-base_url input").fill(fakeModelUrl);
  await settings.locator(".course-settings-model input").fill("fake-model");
  await settings.locator(".course-settings-key input").fill(secretKey);
  let said = await press("check", "Модель ответила");
  check(said.includes("готово") && said.includes("fake-model"), `«Проверить» reached the model: ${said}`);
  await settings.locator(".course-settings-base_url input").fill(unreachableUrl);
  said = await press("check", "не ответила");
  check(said.includes("Не удалось подключиться") && said.includes(unreachableUrl),
    `«Проверить» says what to change: ${said.replace(/\s+/g, " ")}`);
  said = await press("save", "Сохранено");
  check(said.includes("0600") && said.includes("Restart Kernel") && said.includes("ключ сохранён (не показывается)"),
    `«Сохранить» wrote .env and asks for a restart: ${said.replace(/\s+/g, " ")}`);
  check((await settings.locator(".course-settings-key input").inputValue()) === "", "the key field is emptied");
  check(!(await page.evaluate(() => document.body.innerText)).includes(secretKey), "the key is shown nowhere");
  await settings.screenshot({ path: shot("11-settings-saved.png") });
  await page.evaluate(async () => { await window.jupyterapp.commands.execute("docmanager:save"); });

  // --- 00 against the unreachable model: a short Russian error with the next step --------------
  await openPath(SETUP);
  const inserted = await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    const sources = panel.content.widgets.map((cell) => cell.model.sharedModel.getSource());
    if (sources.some((source) => source.includes("setup_notebook("))) return false;
    // Until 00 calls it itself: the first cell a notebook will have (only in this temporary copy).
    panel.content.model.sharedModel.insertCell(0, {
      cell_type: "code", source: "from course_lib.notebook_tools import setup_notebook\n\nsetup_notebook()" });
    return true;
  });
  log(inserted ? "00 has no setup_notebook() yet: added it to the copy" : "00 calls setup_notebook() itself");
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.sessionContext.session.kernel.restart(); // .env was written after this kernel started
    await window.jupyterapp.commands.execute("notebook:run-all-cells");
  });
  const shortError = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .course-error").first();
  await shortError.waitFor({ timeout: 90_000 });
  await shortError.scrollIntoViewIfNeeded();
  const shown = await shortError.evaluate((el) => el.closest(".jp-Cell").querySelector(".jp-OutputArea").innerText);
  const shownLines = shown.split("\n").filter((line) => line.trim());
  check(shownLines.length <= 15, `the error takes ${shownLines.length} lines (at most 15):\n${shown}`);
  check(shown.includes("LLM_BACKEND=offline") && shown.includes("doctor --check"), "it names the next steps");
  check(/[а-яё]{4}/i.test(shown) && !shown.includes("Traceback (most recent call last)"),
    "it is Russian, with no traceback in the way");
  // innerText: what is on screen (the collapsed <details> holds the full traceback, out of the way).
  const rawTracebacks = await page.evaluate(() => [...document.querySelectorAll(
    ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output")]
    .filter((output) => output.innerText.includes("Traceback (most recent call last)")).length);
  check(rawTracebacks === 0, "no raw traceback on screen anywhere in 00");
  await shortError.evaluate((el) => el.closest(".jp-Cell").scrollIntoView());
  await page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").screenshot({ path: shot("12-setup-unreachable.png") });
  await shortError.locator("summary").click();
  check((await shortError.locator("details pre").innerText()).includes("APIConnectionError"),
    "the full traceback is one click away");

  // --- A terminal opened from Lab: the course's python, the printed command works --------------
  await page.evaluate(async () => { await window.jupyterapp.commands.execute("terminal:create-new"); });
  const terminal = page.locator(".jp-Terminal:not(.lm-mod-hidden) .xterm").first();
  await terminal.waitFor({ timeout: 30_000 });
  await page.waitForTimeout(1500); // the shell's prompt
  await terminal.click();
  await page.keyboard.type('cd "$JUPYTER_SERVER_ROOT"; python -m course_lib bench memory > bench-memory.txt 2>&1; '
    + 'echo "exit=$? python=$(command -v python)" >> bench-memory.txt; tail -n 6 bench-memory.txt');
  await page.keyboard.press("Enter");
  let bench = "";
  const benchDeadline = Date.now() + 90_000;
  while (Date.now() < benchDeadline) {
    const response = await fetch(`${base}/api/contents/bench-memory.txt?content=1&type=file&format=text`, {
      headers: { Authorization: `token ${token}` },
    });
    bench = response.ok ? (await response.json()).content : "";
    if (bench.includes("exit=")) break;
    await page.waitForTimeout(500);
  }
  check(bench.includes("exit=0") && bench.includes(".venv/bin/python"),
    `python -m course_lib bench memory ran in Lab's terminal: ${bench.split("\n").slice(-2).join(" | ")}`);
  await page.waitForTimeout(800);
  await page.locator(".jp-Terminal:not(.lm-mod-hidden)").first().screenshot({ path: shot("13-terminal-bench.png") });
  log("all browser checks passed");
} catch (error) {
  console.error(String(error?.stack ?? error));
  await page.screenshot({ path: shot("failure.png"), fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await browser.close();
