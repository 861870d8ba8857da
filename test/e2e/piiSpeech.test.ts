// use_pii_redaction on speech, through `sori serve` with the real model (docs/pii.md): an English call made here
// with espeak-ng reads a card number and a phone number out digit by digit; Whisper base writes them back with
// digits glued to words, dropped or regrouped ("call me Macat415552671", "4532 1488 0343 6467"), which is what the
// recall rules are for. With use_pii_redaction no run of four of the card's or the phone's digits, written or
// spoken, may be left in the body, its words, the exports, the callback or the service's log, with ITN on or off.
// What holds on any CPU is asserted: no digits of either number, masks present, the rest of the speech kept,
// word times in order; never the words the model chose.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { digitRuns } from "../../src/pii/digits.js";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { normalizedCer } from "../helpers/cer.js";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";

const CARD = "4532148803436467";
const PHONE = "4155552671";
const spell = (digits: string, group: number): string =>
  (digits.match(new RegExp(`\\d{1,${group}}`, "gu")) ?? [])
    .map((g) =>
      [...g]
        .map((d) => ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"][Number(d)])
        .join(" "),
    )
    .join(", ");
const SCRIPT =
  "Hello, thank you for calling. I would like to report a lost card. " +
  `My card number is ${spell(CARD, 4)}. ` +
  `And you can call me back at ${spell(PHONE.slice(0, 6), 3)}, ${spell(PHONE.slice(6), 4)}. Thank you.`;

const espeak = ((): string | null => {
  try {
    execFileSync("espeak-ng", ["--version"], { stdio: "ignore" });
    return null;
  } catch {
    return "espeak-ng is not installed (make test installs it; apt-get install espeak-ng): no speech to transcribe";
  }
})();

/** Every run of four digits of the card or the phone number in `text`, its digits read as the PII rules read them
 * (written, or spoken: "four one five"). */
function leaks(text: string): string[] {
  const secrets = [CARD, PHONE];
  const found: string[] = [];
  for (const run of digitRuns(text)) {
    const digits = run.map((u) => u.digits).join("");
    for (let i = 0; i + 4 <= digits.length; i++) {
      const four = digits.slice(i, i + 4);
      if (secrets.some((s) => s.includes(four))) found.push(four);
    }
  }
  return found;
}

/** What a client reads as text, without the numbers that are not speech: JSON numbers (times, durations). */
const said = (body: unknown): string =>
  JSON.stringify(body, (_k, v: unknown) => (typeof v === "number" ? undefined : v))
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/giu, "<id>")
    .replace(/https?:\/\/\S+?(?=["\s]|$)/gu, "<url>");
/** Subtitle cue numbers and timestamps are not speech either. */
const subtitleText = (s: string): string =>
  s
    .split("\n")
    .filter((l) => !/^\d+$/u.test(l.trim()) && !/-->/u.test(l))
    .join("\n");
/** A log line's text fields (pino's JSON), without addresses (a port is not speech). */
const logText = (line: string): string => {
  let text: string;
  try {
    text = said(JSON.parse(line));
  } catch {
    text = line;
  }
  return text.replace(/\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?|:\d{2,5}\b/gu, "<address>");
};

interface Body {
  status: string;
  results: { utterances: { msg: string; words?: { text: string; start_at: number; duration: number }[] }[] };
}

describe("use_pii_redaction on a spoken call through sori serve", { skip: espeak ?? false }, () => {
  let sori: SoriProcess;
  let token = "";
  let audio = "";
  const callbacks: string[] = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      callbacks.push(body);
      res.writeHead(204).end();
    });
  });

  before(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-pii-speech-"));
    audio = path.join(dir, "call.wav");
    execFileSync("espeak-ng", ["-v", "en-us", "-s", "150", "-w", audio, SCRIPT]);
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_PORT: "0",
      SORI_WORKERS: "1",
      SORI_POLL_MS: "200",
      SORI_LOG_LEVEL: "debug",
      SORI_CALLBACK_ALLOW_PRIVATE: "1",
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await sori?.stop();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  const transcribe = async (config: object, file = audio): Promise<{ id: string; body: Body }> => {
    const s = await submit(sori.url, token, file, { model_name: "whisper", language: "en", ...config });
    assert.equal(s.status, 200, JSON.stringify(s.body));
    const id = String(s.body.id);
    const body = (await waitFinal(sori.url, token, id)) as Body;
    assert.equal(body.status, "completed", JSON.stringify(body));
    return { id, body };
  };

  it("the check is real: without redaction the model writes digits of both numbers", async (t) => {
    const { body } = await transcribe({ use_word_timestamp: true });
    const text = body.results.utterances.map((u) => u.msg).join(" ");
    t.diagnostic(`unredacted: ${text}`);
    const found = leaks(text);
    assert.ok(found.some((f) => CARD.includes(f)) && found.some((f) => PHONE.includes(f)), text);
  });

  for (const use_itn of [true, false]) {
    it(`use_itn ${use_itn}: no four digits of either number in the body, words, exports, callback or log`, async (t) => {
      const { id, body } = await transcribe({
        use_itn,
        use_word_timestamp: true,
        use_pii_redaction: true,
        callback_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`,
      });
      const us = body.results.utterances;
      const text = us.map((u) => u.msg).join(" ");
      t.diagnostic(`redacted: ${text}`);
      assert.deepEqual(leaks(said(body)), [], text);
      const words = us.flatMap((u) => u.words ?? []);
      assert.deepEqual(leaks(words.map((w) => w.text).join(" ")), [], JSON.stringify(words));
      // Masks are there, the rest of the call is kept, and word times stay in order.
      assert.match(text, /\[(?:CARD|PHONE|NUMBER)\]/u);
      assert.ok(text.replace(/\[[A-Z_]+\]/gu, "").replace(/[^A-Za-z]/gu, "").length >= 40, text);
      assert.ok(
        words.every((w, i) => i === 0 || w.start_at >= words[i - 1]!.start_at),
        "word times in order",
      );
      for (const format of ["txt", "srt", "vtt"]) {
        const r = await fetch(`${sori.url}/v1/transcribe/${id}/export?format=${format}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(r.status, 200);
        const exported = await r.text();
        assert.deepEqual(leaks(subtitleText(exported)), [], exported);
      }
      for (let i = 0; i < 50 && !callbacks.some((c) => c.includes(id)); i++)
        await new Promise((r) => setTimeout(r, 100));
      assert.ok(
        callbacks.some((c) => c.includes(id)),
        "the callback came",
      );
      assert.deepEqual(leaks(callbacks.map((c) => said(JSON.parse(c))).join("\n")), []);
      const logged = sori.logs.flatMap((line) => leaks(logText(line)).map((four) => `${four} in ${line}`));
      assert.deepEqual(logged, [], "the service log (debug) quotes no digits of either number");
    });
  }

  it("pii_redaction.audio: the redacted copy, transcribed again, says none of the masked digits and keeps the rest", async (t) => {
    const { id, body } = await transcribe({ use_pii_redaction: true, pii_redaction: { audio: true } });
    const first = body.results.utterances.map((u) => u.msg).join(" ");
    assert.match(first, /\[(?:CARD|PHONE|NUMBER)\]/u, first);
    assert.ok(!("words" in body.results.utterances[0]!), "no words in the body: the job did not ask for them");
    const r = await fetch(`${sori.url}/v1/transcribe/${id}/redacted-audio`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "audio/wav");
    const wav = Buffer.from(await r.arrayBuffer());
    // RIFF WAVE, PCM (1), mono, 16 kHz, 16-bit, as long as the call (espeak writes 22.05 kHz).
    assert.equal(wav.subarray(0, 4).toString() + wav.subarray(8, 12).toString(), "RIFFWAVE");
    assert.deepEqual(
      [wav.readUInt16LE(20), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)],
      [1, 1, 16000, 16],
    );
    const original = fs.readFileSync(audio);
    const seconds = (b: Buffer) => b.readUInt32LE(40) / b.readUInt32LE(28);
    assert.ok(Math.abs(seconds(wav) - seconds(original)) < 0.1, `${seconds(wav)} s against ${seconds(original)} s`);
    const copy = path.join(path.dirname(audio), "redacted.wav");
    fs.writeFileSync(copy, wav);

    // Transcribed again, without redaction: none of the masked numbers is said any more, and the rest is.
    const again = (await transcribe({}, copy)).body.results.utterances.map((u) => u.msg).join(" ");
    t.diagnostic(`redacted: ${first}`);
    t.diagnostic(`the redacted audio transcribed: ${again}`);
    assert.deepEqual(leaks(again), [], again);
    // The first transcript's text outside the spans is the reference (tags out, digits kept as digits).
    const cer = normalizedCer(again, first.replace(/\[[A-Z_]+\]/gu, " "));
    t.diagnostic(`CER outside the spans: ${cer.toFixed(3)}`);
    assert.ok(cer <= 0.25, `CER ${cer.toFixed(3)} outside the spans: ${again}`);
  });

  it("a card number read as one group said four times: every group is written, masked, and silent in the copy", async (t) => {
    // Issue 67: the groups said again were dropped as a decoder loop, so the text kept one of them and the copy
    // silenced only that one. espeak-ng's en-gb voice at 140 words a minute is one Whisper base writes as digits.
    const card = path.join(path.dirname(audio), "card.wav");
    const group = "four five three two";
    const script = `Hello. The card number is ${[group, group, group, group].join(", ")}. Thank you, goodbye.`;
    execFileSync("espeak-ng", ["-v", "en-gb", "-s", "140", "-w", card, script]);
    const plain = (await transcribe({}, card)).body.results.utterances.map((u) => u.msg).join(" ");
    t.diagnostic(`without redaction: ${plain}`);
    const groups = (plain.match(/4\D?5\D?3\D?2/gu) ?? []).length;
    assert.ok(groups >= 3, `the groups said again are written again: ${plain}`);
    const { id, body } = await transcribe({ use_pii_redaction: true, pii_redaction: { audio: true } }, card);
    const first = body.results.utterances.map((u) => u.msg).join(" ");
    t.diagnostic(`redacted: ${first}`);
    assert.deepEqual(digitRuns(first), [], first);
    const r = await fetch(`${sori.url}/v1/transcribe/${id}/redacted-audio`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(r.status, 200);
    const copy = path.join(path.dirname(audio), "card-redacted.wav");
    fs.writeFileSync(copy, Buffer.from(await r.arrayBuffer()));
    const again = (await transcribe({}, copy)).body.results.utterances.map((u) => u.msg).join(" ");
    t.diagnostic(`the redacted audio transcribed: ${again}`);
    assert.deepEqual(
      digitRuns(again).flatMap((run) => run.map((u) => u.digits)),
      [],
      `no digit of the card is said in the copy: ${again}`,
    );
  });
});
