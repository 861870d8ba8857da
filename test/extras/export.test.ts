// Subtitle and text export: the cue rules on made-up transcripts, then GET /v1/transcribe/{id}/export on real
// speech through the real server and engine, with the read's access rules.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { buildCues, type CueSource, charLength, DEFAULT_CUE_RULES } from "../../src/export/cues.js";
import { clock, toSrt, toText, toVtt } from "../../src/export/formats.js";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { assertResembles, REFERENCES } from "../helpers/cer.js";
import { assertDocumented } from "../helpers/documented.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac"); // 11 s
const LONG = path.join(TESTDATA, "en/earnings22_1_4482311_3_62.wav"); // 60 s

/** Parses SRT or WebVTT into cues (times in ms) and checks the block structure on the way. */
function parseCues(text: string, kind: "srt" | "vtt"): { start: number; end: number; lines: string[] }[] {
  let body = text;
  if (kind === "vtt") {
    assert.ok(text.startsWith("WEBVTT\n\n"), "WebVTT header");
    body = text.slice("WEBVTT\n\n".length);
  }
  const sep = kind === "srt" ? "," : "\\.";
  const time = new RegExp(`^(\\d{2}):(\\d{2}):(\\d{2})${sep}(\\d{3}) --> (\\d{2}):(\\d{2}):(\\d{2})${sep}(\\d{3})$`);
  const blocks = body.trimEnd().split("\n\n");
  return blocks.map((block, i) => {
    const lines = block.split("\n");
    if (kind === "srt") assert.equal(lines.shift(), String(i + 1), "SRT cues are numbered from 1");
    const m = time.exec(lines.shift() ?? "");
    assert.ok(m, `timing line of cue ${i + 1}: ${block}`);
    const n = m.slice(1).map(Number);
    const start = ((n[0]! * 60 + n[1]!) * 60 + n[2]!) * 1000 + n[3]!;
    const end = ((n[4]! * 60 + n[5]!) * 60 + n[6]!) * 1000 + n[7]!;
    assert.ok(lines.length >= 1 && lines.every((l) => l.trim().length > 0), `cue ${i + 1} has text`);
    return { start, end, lines };
  });
}

function checkRules(cues: { start: number; end: number; lines: string[] }[], strip = (l: string) => l): void {
  assert.ok(cues.length > 0);
  let prevStart = 0;
  for (const c of cues) {
    assert.ok(c.lines.length <= DEFAULT_CUE_RULES.maxLines, `at most 2 lines: ${JSON.stringify(c)}`);
    for (const l of c.lines)
      assert.ok(charLength(strip(l)) <= DEFAULT_CUE_RULES.maxLineChars, `line of at most 42 chars: "${l}"`);
    assert.ok(c.end > c.start, "cue ends after it starts");
    assert.ok(c.end - c.start <= DEFAULT_CUE_RULES.maxCueMs, `cue of at most 7 s: ${JSON.stringify(c)}`);
    assert.ok(c.start >= prevStart, "cues in time order");
    prevStart = c.start;
  }
}

const squash = (s: string): string => s.replace(/\s+/g, "");

describe("cue rules", () => {
  const english: CueSource = {
    start_at: 1000,
    duration: 20_000,
    spk: 0,
    msg: "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country. We choose to go to the moon in this decade and do the other things, not because they are easy, but because they are hard.",
  };
  const japanese: CueSource = {
    start_at: 30_000,
    duration: 9000,
    spk: 1,
    msg: "今日はいい天気ですね。散歩に行きましょう、公園まで。そして帰りに駅前の店で夕飯の買い物をしましょう。",
  };

  it("keeps every cue within 2 lines of 42 characters and 7 s, and loses no text", () => {
    const cues = buildCues([english, japanese]);
    checkRules(cues);
    assert.equal(
      squash(
        cues
          .filter((c) => c.spk === 0)
          .flatMap((c) => c.lines)
          .join(""),
      ),
      squash(english.msg),
    );
    assert.equal(
      cues
        .filter((c) => c.spk === 1)
        .flatMap((c) => c.lines)
        .join(""),
      japanese.msg,
    );
    for (const c of cues)
      assert.ok(
        !/^[、。]/.test(c.lines[0]!) && !c.lines.some((l) => /^[、。]/.test(l)),
        "no line starts with 、 or 。",
      );
  });

  it("takes the times from word timestamps when present", () => {
    const words = ["Hello", "there,", "general", "Kenobi."].map((text, i) => ({
      start_at: 10_000 + i * 2500,
      duration: 500,
      text,
    }));
    const cues = buildCues([{ start_at: 10_000, duration: 8000, spk: 0, msg: "Hello there, general Kenobi.", words }]);
    // 8 s of speech: more than one cue, split where the words fall; the first starts at the first word.
    assert.ok(cues.length >= 2, JSON.stringify(cues));
    assert.equal(cues[0]!.start, 10_000);
    const last = cues[cues.length - 1]!;
    assert.ok(last.lines.join(" ").endsWith("Kenobi."));
    assert.ok(last.start >= 12_500, `a later cue starts at a later word: ${JSON.stringify(cues)}`);
    checkRules(cues);
  });

  it("gives a short cue at least 1 s unless the next cue starts sooner", () => {
    const cues = buildCues([
      { start_at: 0, duration: 200, spk: 0, msg: "Hi." },
      { start_at: 600, duration: 300, spk: 0, msg: "Yes." },
      { start_at: 5000, duration: 100, spk: 0, msg: "Bye." },
    ]);
    assert.deepEqual(
      cues.map((c) => [c.start, c.end]),
      [
        [0, 600],
        [600, 1600],
        [5000, 6000],
      ],
    );
  });

  it("cuts a word longer than a line", () => {
    const cues = buildCues([{ start_at: 0, duration: 3000, spk: 0, msg: "x".repeat(100) }]);
    checkRules(cues);
    assert.equal(cues.flatMap((c) => c.lines).join(""), "x".repeat(100));
  });

  it("labels speakers when diarized: SRT prefix, WebVTT voice tag, text turns", () => {
    const u = [
      { start_at: 0, duration: 1500, spk: 0, msg: "Good morning." },
      { start_at: 1500, duration: 1500, spk: 1, msg: "Morning <all> & welcome." },
      { start_at: 3000, duration: 1500, spk: 1, msg: "Shall we start?" },
    ];
    const srt = toSrt(u, { speakers: "speaker" });
    checkRules(parseCues(srt, "srt"));
    assert.match(srt, /^1\n00:00:00,000 --> 00:00:01,500\n\[Speaker 0\] Good morning\.\n/);
    const vtt = toVtt(u, { speakers: "speaker" });
    assert.match(vtt, /<v Speaker 1>Morning &lt;all&gt; &amp; welcome\./);
    assert.equal(
      toText(u, { speakers: "speaker" }),
      "Speaker 0: Good morning.\n\nSpeaker 1: Morning <all> & welcome. Shall we start?\n",
    );
    assert.equal(toText(u), "Good morning.\nMorning <all> & welcome.\nShall we start?\n");
    assert.equal(clock(3_723_004, ","), "01:02:03,004");
  });
});

describe("GET /v1/transcribe/{id}/export on real speech", () => {
  let sori: SoriProcess;
  let url: string;
  let token: string;
  let otherToken: string;
  let jobId: string;
  let dataDir: string;

  const get = async (id: string, query: string, t = token) => {
    const r = await fetch(`${url}/v1/transcribe/${id}/export${query}`, { headers: { authorization: `Bearer ${t}` } });
    const out = {
      status: r.status,
      type: r.headers.get("content-type") ?? "",
      disposition: r.headers.get("content-disposition"),
      text: await r.text(),
    };
    const media = out.type.split(";")[0]!;
    assertDocumented(
      "GET /v1/transcribe/{id}/export",
      out.status,
      media === "application/json" ? JSON.parse(out.text) : out.text,
      media,
    );
    return out;
  };

  before(async () => {
    dataDir = tempDataDir();
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200" };
    const a = createClient(env);
    const b = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, a.client_id, a.client_secret);
    otherToken = await authenticate(url, b.client_id, b.client_secret);
    const r = await submit(url, token, JFK, { model_name: "whisper", language: "detect", use_word_timestamp: true });
    jobId = String(r.body.id);
    assert.equal((await waitFinal(url, token, jobId)).status, "completed");
  });
  after(() => sori.stop());

  it("SRT follows the cue rules and says what was said", async () => {
    const r = await get(jobId, "?format=srt");
    assert.equal(r.status, 200);
    assert.equal(r.type, "application/x-subrip; charset=utf-8");
    assert.equal(r.disposition, `attachment; filename="${jobId}.srt"`);
    const cues = parseCues(r.text, "srt");
    checkRules(cues);
    assert.ok(cues.length >= 2, "11 s of speech makes more than one cue");
    const text = cues
      .flatMap((c) => c.lines)
      .join(" ")
      .toLowerCase();
    assertResembles(text, REFERENCES.jfk, 0.3, "srt");
    assert.ok(cues[cues.length - 1]!.end <= 11_500, "cues end within the audio");
  });

  it("WebVTT has the same cues", async () => {
    const srt = parseCues((await get(jobId, "?format=srt")).text, "srt");
    const r = await get(jobId, "?format=vtt");
    assert.equal(r.status, 200);
    assert.equal(r.type, "text/vtt; charset=utf-8");
    assert.deepEqual(parseCues(r.text, "vtt"), srt);
  });

  it("plain text holds the utterances, and srt is the default format", async () => {
    const read = await fetch(`${url}/v1/transcribe/${jobId}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await read.json()) as { results: { utterances: { msg: string }[] } };
    const r = await get(jobId, "?format=txt");
    assert.equal(r.status, 200);
    assert.equal(r.type, "text/plain; charset=utf-8");
    assert.equal(r.text, body.results.utterances.map((u) => u.msg + "\n").join(""));
    assert.equal((await get(jobId, "")).type, "application/x-subrip; charset=utf-8");
  });

  it("follows the read's rules: 400 H0001, 401 H0002, 403 H0003, 404 H0004, 410 H0007", async () => {
    const code = async (p: Promise<{ status: number; text: string }>) => {
      const r = await p;
      return [r.status, (JSON.parse(r.text) as { code: string }).code];
    };
    assert.deepEqual(await code(get(jobId, "?format=docx")), [400, "H0001"]);
    assert.deepEqual(await code(get("bad%20id", "?format=srt")), [400, "H0001"]);
    assert.deepEqual(await code(get(jobId, "?format=srt", "not-a-token")), [401, "H0002"]);
    assert.deepEqual(await code(get(jobId, "?format=srt", otherToken)), [403, "H0003"]);
    assert.deepEqual(await code(get("nosuchjob", "?format=srt")), [404, "H0004"]);

    // Another job, expired by moving its expiry into the past.
    const r = await submit(url, token, JFK, { model_name: "whisper", language: "detect" });
    const id = String(r.body.id);
    await waitFinal(url, token, id);
    const db = new Sqlite(path.join(dataDir, "sori.db"));
    db.prepare("UPDATE jobs SET expires_at = ? WHERE id = ?").run(Date.now() - 1000, id);
    db.close();
    assert.deepEqual(await code(get(id, "?format=vtt")), [410, "H0007"]);
  });

  it("a job still transcribing has nothing to export yet: 404 H0004", async () => {
    const r = await submit(url, token, LONG, {
      model_name: "whisper",
      language: "detect",
      language_candidates: ["en"],
    });
    const id = String(r.body.id);
    const e = await get(id, "?format=srt");
    assert.equal(e.status, 404);
    assert.match((JSON.parse(e.text) as { msg: string }).msg, /transcribing/);
    // Not needed any further: delete it, so the worker drops it.
    const d = await fetch(`${url}/v1/transcribe/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(d.status, 200);
  });
});
