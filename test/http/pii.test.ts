// use_pii_redaction through the HTTP API (docs/pii.md), on a real `sori serve` whose engine is a stub that answers a
// call transcript known in advance (test/helpers/stubEngine.mjs) and whose insight LLM is a stub OpenAI endpoint in
// this process: the read body, its words, the exports, the refined result, the insight (and what the LLM was sent),
// the OpenAI route and the logs hold none of the call's personal data; without the field every body is the same
// as with it false, and holds the transcript as it was said.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { assertDocumented } from "../helpers/documented.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const AUDIO = path.join(TESTDATA, "ko/deeply_anechoic_sub100120a00053.wav");

// A call said across three segments: the phone number runs over the first break, spoken digit by digit.
const SEGMENTS = [
  { start: 0.2, end: 4.0, text: "네 제 이름은 홍길동이고요 연락처는 공일공 구팔칠육" },
  { start: 4.3, end: 9.0, text: "오사삼이 이에요. 카드 번호는 4111 1111 1111 1111 입니다." },
  { start: 9.4, end: 14.0, text: "이메일은 gildong77@naver.com 이고 주문번호는 20240315 입니다." },
];
/** What must not reach a client: every form of each entity said above, and the one the refinement "hears". */
const SECRETS = [
  "홍길동",
  "공일공",
  "구팔칠육",
  "오사삼이",
  "4111",
  "1111 1111",
  "gildong77",
  "naver.com",
  "010-5555-0199",
  "5555",
];
const REFINED_VALUE = "010-5555-0199";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/giu;
/**
 * The secrets in what a client or a log sees. Only text carries what was said: JSON numbers (log times, pids,
 * durations, word times) and random ids are left out first, as a "4111" inside `"time":1764241114111` or a job's
 * UUID is chance, not a leak (it failed CI once on a log timestamp).
 */
const leaks = (seen: unknown): string[] => {
  const text =
    typeof seen === "string" ? seen : JSON.stringify(seen, (_k, v: unknown) => (typeof v === "number" ? undefined : v));
  const said = text.replace(UUID, "<id>");
  return SECRETS.filter((s) => said.includes(s));
};
/** A log line as its JSON fields where it is JSON (pino's), so that its numbers are not read as text. */
const logFields = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
};

/** An OpenAI-compatible chat endpoint that summarises whatever follows "연락처는" in what it is sent. */
function stubLlm(): Promise<{ url: string; prompts: string[]; close(): Promise<void> }> {
  const prompts: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const messages = (JSON.parse(body) as { messages: { content: string }[] }).messages;
      const user = messages[messages.length - 1]!.content;
      prompts.push(user);
      const heard = /연락처는\s*([^\n]{0,16})/u.exec(user)?.[1] ?? "";
      const item = {
        summary: `고객이 연락처와 결제 정보를 알려 주며 주문 상태를 확인하려고 전화했다. 연락처: ${heard}`,
        title: "주문 상태 확인 문의",
        unsolicited: false,
        category: "customer_calls_business",
      };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(item) } }] }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        prompts,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

describe("use_pii_redaction through the API", () => {
  let sori: SoriProcess;
  let llm: Awaited<ReturnType<typeof stubLlm>>;
  let token = "";
  let otherToken = "";
  const redactLog = path.join(tempDataDir(), "redact.jsonl");
  const base = { model_name: "sommers", language: "ko", use_itn: false, use_word_timestamp: true };

  before(async () => {
    llm = await stubLlm();
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_PORT: "0",
      SORI_WORKERS: "1",
      SORI_LOG_LEVEL: "debug",
      SORI_POLL_MS: "100",
      SORI_PYTHON: path.join(ROOT, "test/helpers/stubEngine.mjs"),
      SORI_STUB_SEGMENTS: JSON.stringify(SEGMENTS),
      SORI_STUB_REFINED_VALUE: REFINED_VALUE,
      SORI_INSIGHT_BASE_URL: llm.url,
      SORI_STUB_REDACT_LOG: redactLog,
      SORI_STUB_CHANNELS: "2",
    };
    const c = createClient(env, ["--tier", "enterprise"]);
    const other = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
    otherToken = await authenticate(sori.url, other.client_id, other.client_secret);
  });
  after(async () => {
    await sori?.stop();
    await llm?.close();
  });

  interface Body {
    id: string;
    status: string;
    results: { utterances: { words: { text: string; start_at: number; duration: number }[] }[]; insight: unknown[] };
  }
  const run = async (config: object): Promise<{ id: string; body: Body }> => {
    const s = await submit(sori.url, token, AUDIO, config);
    assert.equal(s.status, 200, JSON.stringify(s.body));
    const id = s.body.id as string;
    return { id, body: (await waitFinal(sori.url, token, id, 60_000)) as Body };
  };

  it("a redacted job's read body, words, exports, refined result and insight hold no entity", async () => {
    const { id, body } = await run({ ...base, use_pii_redaction: true, use_insight: true, use_refinement: true });
    assert.equal(body.status, "completed", JSON.stringify(body));
    const text = JSON.stringify(body);
    assert.deepEqual(leaks(body), [], text);
    // What was masked, and what was not: the order number and the words around the entities stay.
    for (const kept of ["[NAME]", "[PHONE]", "[CARD]", "[EMAIL]", "주문번호는"]) assert.ok(text.includes(kept), kept);
    // Words are redacted with their times: one word per masked span, from its first word's start to its last's end.
    const words = body.results.utterances.flatMap((u) => u.words);
    const card = words.find((w) => w.text.startsWith("[CARD]"));
    assert.ok(card && card.duration > 0, JSON.stringify(words));
    assert.ok(
      words.every((w, i) => i === 0 || w.start_at >= words[i - 1]!.start_at),
      "word times stay in order",
    );
    // The insight LLM was given only the redacted transcript.
    assert.ok(llm.prompts.length > 0, "insight asked the LLM");
    assert.deepEqual(leaks(llm.prompts.join("\n")), [], llm.prompts.join("\n"));
    assert.equal(body.results.insight.length, 1, JSON.stringify(body.results));

    for (const format of ["srt", "vtt", "txt"]) {
      const r = await fetch(`${sori.url}/v1/transcribe/${id}/export?format=${format}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(r.status, 200);
      const exported = await r.text();
      assert.deepEqual(leaks(exported), [], exported);
      assert.ok(exported.includes("[PHONE]"), exported);
    }

    // The refined result is redacted as well.
    let refined: { refine_status?: string } = {};
    for (let i = 0; i < 200; i++) {
      refined = (await read(sori.url, token, id, "?result=refined")).body;
      if (refined.refine_status === "completed" || refined.refine_status === "failed") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(refined.refine_status, "completed", JSON.stringify(refined));
    assert.deepEqual(leaks(refined), [], JSON.stringify(refined));
    // Refinement changes no language by default (docs/enterprise.md, "How the rule was chosen"): the refined result
    // is the redacted base text, and it must hold no entity either.

    const list = await fetch(`${sori.url}/v1/transcribe`, { headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(leaks(await list.json()), []);
    // No log line at any level (debug here) quotes the call.
    assert.deepEqual(leaks(sori.logs.map(logFields)), []);
  });

  it("the OpenAI-compatible route redacts with its use_pii_redaction extension field", async () => {
    for (const format of ["json", "verbose_json", "srt"]) {
      const form = new FormData();
      form.append("model", "sommers");
      form.append("language", "ko");
      form.append("response_format", format);
      form.append("use_pii_redaction", "true");
      form.append("file", new Blob([fs.readFileSync(AUDIO)]), "call.wav");
      const r = await fetch(`${sori.url}/v1/audio/transcriptions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      const text = await r.text();
      assert.equal(r.status, 200, text);
      assert.deepEqual(leaks(format === "srt" ? text : (JSON.parse(text) as unknown)), [], text);
      assert.ok(text.includes("[PHONE]") || text.includes("[CARD]"), text);
    }
  });

  it("without use_pii_redaction the body is the same as with it false, and says everything", async () => {
    const absent = await run(base);
    const off = await run({ ...base, use_pii_redaction: false });
    const strip = (b: { id: string }): string => JSON.stringify({ ...b, id: "" });
    assert.equal(strip(absent.body), strip(off.body));
    assert.ok(JSON.stringify(absent.body).includes("홍길동"));
    assert.ok(JSON.stringify(absent.body).includes("구팔칠육"));
    assert.ok(!JSON.stringify(absent.body).includes("[PHONE]"));
  });

  it("bad redaction settings are refused with H0001 naming the field", async () => {
    const cases: [object, RegExp][] = [
      [{ use_pii_redaction: true, pii_redaction: { types: ["phone", "passport"] } }, /config\.pii_redaction\.types\.1/],
      [{ use_pii_redaction: true, pii_redaction: { mode: "blur" } }, /config\.pii_redaction\.mode/],
      [{ use_pii_redaction: "yes" }, /config\.use_pii_redaction/],
      [{ pii_redaction: { mode: "mask" } }, /pii_redaction needs use_pii_redaction/],
      [{ pii_redaction: { audio: true } }, /pii_redaction needs use_pii_redaction/],
      [{ use_pii_redaction: true, pii_redaction: { audio: "yes" } }, /config\.pii_redaction\.audio:/],
      [
        { use_pii_redaction: true, pii_redaction: { audio: true, audio_mode: "bleep" } },
        /config\.pii_redaction\.audio_mode: must be one of silence, beep/,
      ],
      [
        { use_pii_redaction: true, pii_redaction: { audio_mode: "beep" } },
        /audio_mode needs pii_redaction\.audio true/,
      ],
    ];
    for (const [config, msg] of cases) {
      const s = await submit(sori.url, token, AUDIO, { ...base, ...config });
      assert.equal(s.status, 400, JSON.stringify(s.body));
      assert.equal(s.body.code, "H0001");
      assert.match(String(s.body.msg), msg);
      assertDocumented("POST /v1/transcribe", s.status, s.body);
    }
  });

  const redactedAudio = (id: string, bearer = token): Promise<Response> =>
    fetch(`${sori.url}/v1/transcribe/${id}/redacted-audio`, { headers: { authorization: `Bearer ${bearer}` } });
  const requests = (): {
    audio_path: string;
    out_path: string;
    mode: string;
    tracks: { channel: number | null; spans: [number, number][] }[];
  }[] =>
    fs.existsSync(redactLog)
      ? fs
          .readFileSync(redactLog, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l))
      : [];

  it("pii_redaction.audio: a WAV with the redacted spans covered, for the job's own client only", async () => {
    const { id, body } = await run({
      ...base,
      use_pii_redaction: true,
      pii_redaction: { audio: true, audio_mode: "beep" },
    });
    assert.equal(body.status, "completed", JSON.stringify(body));
    assert.ok(!JSON.stringify(body).includes("redacted"), "the read body says nothing new");
    const r = await redactedAudio(id);
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get("content-type"), "audio/wav");
    const wav = Buffer.from(await r.arrayBuffer());
    assert.equal(wav.subarray(0, 4).toString(), "RIFF");
    assert.equal(wav.readUInt16LE(22), 1, "one channel: the transcript was of the mono downmix");
    // The engine was asked for the downmix, with each masked span's word times and 0.25 s each side.
    const req = requests().at(-1)!;
    assert.equal(req.mode, "beep");
    assert.ok(!req.out_path.includes(id) && path.isAbsolute(req.out_path), "a spool path of the service's own");
    assert.equal(req.tracks.length, 1);
    assert.equal(req.tracks[0]!.channel, null);
    const spans = req.tracks[0]!.spans;
    const words = body.results.utterances.flatMap((u) => u.words);
    const masked = words.filter((w) => /^\[[A-Z_]+\]/u.test(w.text));
    assert.ok(masked.length >= 3, JSON.stringify(words));
    for (const w of masked) {
      const [a, b] = [w.start_at / 1000, (w.start_at + w.duration) / 1000];
      assert.ok(
        spans.some(([s, e]) => s <= Math.max(0, a - 0.25) + 1e-6 && e >= b + 0.25 - 1e-6),
        `${w.text} ${a}-${b} covered with its margin by ${JSON.stringify(spans)}`,
      );
    }
    // Another client gets what it gets for the job itself (the read table: 403 H0003), and no audio.
    for (const path_ of [`/v1/transcribe/${id}`, `/v1/transcribe/${id}/redacted-audio`]) {
      const o = await fetch(`${sori.url}${path_}`, { headers: { authorization: `Bearer ${otherToken}` } });
      const ob = (await o.json()) as { code: string };
      assert.equal(o.status, 403, path_);
      assert.equal(ob.code, "H0003");
    }
    const unknown = await redactedAudio("no-such-job");
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: string }).code, "H0004");
    // Deleting the job deletes the copy.
    const d = await fetch(`${sori.url}/v1/transcribe/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(d.status, 200);
    assert.equal((await redactedAudio(id)).status, 404);
  });

  it("use_multi_channel: a channel per channel, each covered at its own spans (word times asked for or not)", async () => {
    const { id, body } = await run({
      ...base,
      use_word_timestamp: false,
      use_multi_channel: true,
      use_pii_redaction: true,
      pii_redaction: { audio: true },
    });
    assert.equal(body.status, "completed", JSON.stringify(body));
    assert.ok(!JSON.stringify(body).includes('"words"'), "the words it did not ask for are not in the body");
    const r = await redactedAudio(id);
    assert.equal(r.status, 200);
    assert.equal(Buffer.from(await r.arrayBuffer()).readUInt16LE(22), 2);
    const req = requests().at(-1)!;
    assert.equal(req.mode, "silence");
    assert.deepEqual(
      req.tracks.map((t) => t.channel),
      [0, 1],
    );
    // The stub says the same call on both channels, so both are covered, each from its own utterances.
    assert.ok(
      req.tracks.every((t) => t.spans.length >= 3),
      JSON.stringify(req.tracks),
    );
  });

  it("a job that did not ask for the redacted audio answers 404 H0004", async () => {
    for (const config of [base, { ...base, use_pii_redaction: true }]) {
      const { id, body } = await run(config);
      assert.equal(body.status, "completed");
      const r = await redactedAudio(id);
      const b = (await r.json()) as { code: string; msg: string };
      assert.equal(r.status, 404);
      assert.equal(b.code, "H0004");
      assert.match(b.msg, /did not ask for it/u);
      assertDocumented("GET /v1/transcribe/{id}/redacted-audio", r.status, b);
    }
  });
});
