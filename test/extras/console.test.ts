// The web console in a real browser (Debian's Chromium through playwright-core) against the real server: log in,
// upload real speech, watch it transcribe, see the transcript, click a word to seek the audio, export. Screenshots
// go to test-artifacts/console/.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { assertResembles, REFERENCES } from "../helpers/cer.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const CHROMIUM = "/usr/bin/chromium";
const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");
const missing = !fs.existsSync(CHROMIUM)
  ? `${CHROMIUM} is not installed (apt-get install chromium)`
  : !fs.existsSync(path.join(ROOT, "console/dist/index.html"))
    ? "console/dist is not built (npm run build)"
    : null;

describe("web console in Chromium", { skip: missing ?? false }, () => {
  let sori: SoriProcess;
  let browser: Browser;
  let page: Page;
  let creds: { client_id: string; client_secret: string };

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const env = { SORI_DATA_DIR: tempDataDir(), SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200" };
    creds = createClient(env);
    sori = await startSori("serve", env);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--autoplay-policy=no-user-gesture-required"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  });
  after(async () => {
    await browser?.close();
    await sori?.stop();
  });

  it("refuses a wrong secret, then logs in", async () => {
    await page.goto(sori.url);
    await page.fill("input[name=client_id]", creds.client_id);
    await page.fill("input[name=client_secret]", "wrong");
    await page.click("button[type=submit]");
    await page.waitForSelector("[role=alert]");
    assert.match((await page.textContent("[role=alert]")) ?? "", /H0002/);
    await page.fill("input[name=client_secret]", creds.client_secret);
    await page.screenshot({ path: path.join(ARTIFACTS, "login.png") });
    await page.click("button[type=submit]");
    await page.waitForSelector("form.upload");
  });

  it("uploads real speech, shows it transcribing, then the transcript", async () => {
    await page.setInputFiles("input[type=file]", JFK);
    await page.selectOption("select[name=model]", "whisper");
    await page.click("form.upload button[type=submit]");
    await page.waitForSelector(".transcript .status");
    await page.waitForSelector(".jobs li[data-job]");
    await page.waitForSelector(".utterances .word", { timeout: 120_000 });
    const text = (await page.textContent(".utterances")) ?? "";
    assertResembles(text.replace(/Speaker \d+/g, ""), REFERENCES.jfk, 0.3, "console transcript");
    assert.match(text, /Speaker 0/);
    await page.waitForSelector(".jobs .status.completed", { timeout: 10_000 });
  });

  it("clicking a word seeks the audio to it", async () => {
    const word = page.locator(".utterances .word").last(); // the last word of the clip, whatever the model spelled
    const start = Number(await word.getAttribute("data-start"));
    assert.ok(start > 1000, `the word starts at ${start} ms`);
    await page.waitForFunction(() => (document.querySelector("audio")?.readyState ?? 0) >= 1);
    await word.click();
    const at = await page.evaluate(() => document.querySelector("audio")!.currentTime * 1000);
    assert.ok(Math.abs(at - start) < 300, `audio at ${at} ms, word at ${start} ms`);
    await page.evaluate(() => document.querySelector("audio")!.pause());
    await page.screenshot({ path: path.join(ARTIFACTS, "transcript.png") });
  });

  it("exports subtitles", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=SRT")]);
    const file = path.join(ARTIFACTS, "export.srt");
    await download.saveAs(file);
    assert.match(fs.readFileSync(file, "utf8"), /^1\n00:00:\d{2},\d{3} --> /);
  });
});
