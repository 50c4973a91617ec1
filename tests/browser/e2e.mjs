// End-to-end check of the course widgets in real JupyterLab, driven through Debian's Chromium.
//
// Started by test_browser_e2e.py, which runs JupyterLab and passes everything in the environment:
//   JUPYTER_URL (http://127.0.0.1:PORT), JUPYTER_TOKEN, NOTEBOOK (path under the server root),
//   ARTIFACTS_DIR (screenshots), CHROMIUM (the browser binary, /usr/bin/chromium).
// Exit code 0 means every step passed; on failure a screenshot of the page is saved as failure.png.

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
const artifacts = env("ARTIFACTS_DIR");
const executablePath = env("CHROMIUM");
mkdirSync(artifacts, { recursive: true });

const started = Date.now();
const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
  log(`ok: ${message}`);
}

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
const page = await browser.newPage({ viewport: { width: 1500, height: 2200 } });
page.setDefaultTimeout(30_000);
page.on("pageerror", (error) => console.log(`page error: ${error.message}`));

const MESSAGE = "На самом мониторе повреждений нет.";
const RECALL = "Напомните номер заказа и что именно было повреждено.";

async function sendMessage(text) {
  const assistant = page.locator(".course-chat-transcript .course-msg-assistant");
  const before = await assistant.count();
  await page.locator(".course-chat-input textarea").fill(text);
  await page.locator("button.course-chat-send").click();
  await page.waitForFunction(
    ([selector, count]) => document.querySelectorAll(selector).length > count,
    [".course-chat-transcript .course-msg-assistant", before],
    { timeout: 30_000 },
  );
  const reply = (await assistant.last().innerText()).trim();
  log(`reply to «${text}»: ${reply.replace(/\s+/g, " ")}`);
  return reply;
}

try {
  log(`browser ${browser.version()}`);
  await page.goto(`${base}/lab/tree/${notebook}?token=${token}`);
  await page.waitForFunction(
    () => window.jupyterapp?.shell?.currentWidget?.sessionContext !== undefined,
    null,
    { timeout: 60_000 },
  );
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
  });
  log("notebook open, kernel ready");

  await page.evaluate(() => window.jupyterapp.commands.execute("notebook:run-all-cells"));
  await page.locator(".course-chat").waitFor({ timeout: 60_000 });
  await page.locator(".course-quiz").nth(1).waitFor({ timeout: 30_000 });
  log("all cells ran: chat panel and quizzes rendered");

  const transcript = page.locator(".course-chat-transcript");
  check(
    (await transcript.innerText()).includes("Фото повреждения уже сделал."),
    "the chat continues the session: its stored messages are shown",
  );
  check(
    (await page.locator(".course-session-id").innerText()).trim() === "demo",
    "the Session ID is shown",
  );
  const inspector = page.locator(".course-inspector-body");
  check((await inspector.innerText()).includes("Отправьте сообщение"), "the inspector waits for a reply");

  // --- The chat: one message, then the recall question -----------------------------------------
  await sendMessage(MESSAGE);
  let text = await inspector.innerText();
  check(text.includes("Последний запрос к модели"), "the inspector shows the last request");
  check(text.includes(MESSAGE) && text.includes("новое сообщение"), "the new user message is marked");
  check(/Использовано \d+ из 300 токенов бюджета/.test(text), "the budget bar reads used of 300");
  check(text.includes("developer-инструкция"), "the developer message is marked");
  check(
    (await page.locator(".course-chat-metrics").innerText()).includes("Оценка входных токенов до запроса"),
    "the console metrics are shown after the reply",
  );
  await page.locator(".course-chat-panel").screenshot({ path: join(artifacts, "01-chat-after-message.png") });

  const recall = await sendMessage(RECALL);
  check(recall.includes("7718"), "the recall reply still knows order 7718");
  text = await inspector.innerText();
  check(text.includes(RECALL), "the inspector shows the recall request");
  check(text.includes("summary") && !text.includes("нет (сессия ещё не сжималась)"), "a summary is stored");
  await page.locator(".course-chat-panel").screenshot({ path: join(artifacts, "02-chat-after-recall.png") });

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
  await page.locator(".course-chat-panel").screenshot({ path: join(artifacts, "03-budget-minimum.png") });

  // --- The quizzes ------------------------------------------------------------------------------
  const single = page.locator(".course-quiz").nth(0);
  await single.scrollIntoViewIfNeeded();
  await single.locator(".course-quiz-option-0 input[type=checkbox]").click();
  await single.locator(".course-quiz-verdict").waitFor();
  check((await single.locator(".course-quiz-feedback").innerText()).includes("Неверно"), "a wrong pick says Неверно");
  await single.locator(".course-quiz-option-1 input[type=checkbox]").click();
  await page.waitForFunction(
    () => document.querySelector(".course-quiz .course-quiz-verdict")?.innerText.includes("Верно!"),
  );
  const feedback = await single.locator(".course-quiz-feedback").innerText();
  check(feedback.includes("Пояснение"), "the right pick says Верно! and explains");

  const multiple = page.locator(".course-quiz").nth(1);
  await multiple.locator(".course-quiz-option-0 input[type=checkbox]").click();
  await multiple.locator(".course-quiz-option-2 input[type=checkbox]").click();
  await multiple.locator("button.course-quiz-check").click();
  await multiple.locator(".course-quiz-verdict").waitFor();
  check(
    (await multiple.locator(".course-quiz-feedback").innerText()).includes("Не совсем"),
    "a partly wrong multiple choice says what is off",
  );
  await single.screenshot({ path: join(artifacts, "04-quiz-single.png") });
  await multiple.screenshot({ path: join(artifacts, "05-quiz-multiple.png") });
  log("all browser checks passed");
} catch (error) {
  console.error(String(error?.stack ?? error));
  await page.screenshot({ path: join(artifacts, "failure.png"), fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await browser.close();
