// The Enterprise add-ons through the real HTTP API, the real engine (whisper-base) and the real embedded insight
// model (Qwen2.5-Coder-1.5B-Instruct GGUF through node-llama-cpp): license tiers, the refinement phase's lifecycle including a
// forced input failure, insight on real Korean and English speech, and an LLM whose answers are malformed.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { INSIGHT_GGUF } from "../../src/config.js";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { createClient, ROOT, type SoriProcess, soriSync, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const CATEGORIES = ["일상", "문의", "업무", "스팸"];
const KO_FILE = path.join(TESTDATA, "ko/deeply_studioapt_sub100102a00015.wav");
const KO_SHORT = path.join(TESTDATA, "ko/deeply_studioapt_sub100100a00088.wav");
const EN_FILE = path.join(TESTDATA, "en/whisper_jfk.flac");
const GGUF = path.join(ROOT, "models", INSIGHT_GGUF);

const baseEnv = (dataDir: string): NodeJS.ProcessEnv => ({
  SORI_DATA_DIR: dataDir,
  SORI_PORT: "0",
  SORI_WORKERS: "1",
  SORI_POLL_MS: "200",
  SORI_DEFAULT_READ_RPS: "50",
});

function db(dataDir: string): Sqlite.Database {
  return new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
}

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 600_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("enterprise: license tiers", () => {
  let sori: SoriProcess;
  let dataDir: string;
  let standard: string;
  let enterprise: string;

  before(async () => {
    dataDir = tempDataDir();
    const env = { ...baseEnv(dataDir), SORI_WORKERS: "0" };
    const s = createClient(env);
    const e = createClient(env, ["--tier", "enterprise"]);
    sori = await startSori("serve", env);
    standard = await authenticate(sori.url, s.client_id, s.client_secret);
    enterprise = await authenticate(sori.url, e.client_id, e.client_secret);
  });
  after(() => sori.stop());

  it("refuses use_refinement and use_insight from a standard client with 403 H0003 and queues nothing", async () => {
    for (const config of [
      { use_refinement: true },
      { use_insight: true },
      { use_insight: true, insight: { prompt: "x" } },
    ]) {
      const r = await submit(sori.url, standard, KO_SHORT, config);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.code, "H0003");
      assert.match(String(r.body.msg), /Enterprise/);
    }
    const d = db(dataDir);
    assert.equal((d.prepare("select count(*) as n from jobs").get() as { n: number }).n, 0);
    d.close();
    assert.equal(fs.readdirSync(path.join(dataDir, "blobs")).length, 0, "no upload is kept");
  });

  it("refuses use_refinement with use_multi_channel with 400 H0001, even for an enterprise client", async () => {
    const r = await submit(sori.url, enterprise, KO_SHORT, { use_refinement: true, use_multi_channel: true });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, "H0001");
    assert.match(String(r.body.msg), /use_multi_channel/);
  });

  it("accepts the add-ons from an enterprise client", async () => {
    const r = await submit(sori.url, enterprise, KO_SHORT, { use_refinement: true, use_insight: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(typeof r.body.id, "string");
  });
});

describe("enterprise: refinement lifecycle through the API", () => {
  let api: SoriProcess;
  let refiner: SoriProcess | null = null;
  let dataDir: string;
  let token: string;

  before(async () => {
    dataDir = tempDataDir();
    // The API process's worker takes base jobs only, so refinements stay queued until the test starts a
    // refinement worker: the queued state is observable and the audio can be removed in between.
    const env = { ...baseEnv(dataDir), SORI_WORKER_REFINE: "0" };
    const c = createClient(env, ["--tier", "enterprise"]);
    api = await startSori("serve", env);
    token = await authenticate(api.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await refiner?.stop();
    await api.stop();
  });

  it("queued → processing → completed with base timing kept; removed audio fails with refiner_input_unavailable", async () => {
    const ok = await submit(api.url, token, KO_FILE, { use_refinement: true, use_word_timestamp: true });
    const gone = await submit(api.url, token, KO_SHORT, { use_refinement: true });
    assert.equal(ok.status, 200);
    assert.equal(gone.status, 200);
    const [okId, goneId] = [String(ok.body.id), String(gone.body.id)];

    // While the base job runs, result=refined reports only the base status.
    const early = await read(api.url, token, okId, "?result=refined");
    if (early.body.status === "transcribing") assert.deepEqual(early.body, { id: okId, status: "transcribing" });

    const base = await waitFinal(api.url, token, okId, 300_000);
    await waitFinal(api.url, token, goneId, 300_000);
    assert.equal(base.status, "completed");
    assert.ok(base.results.utterances.length > 0);
    assert.equal(base.refine_status, undefined, "the plain read carries no refinement fields");

    for (const id of [okId, goneId]) {
      const r = await read(api.url, token, id, "?result=refined");
      assert.deepEqual(r.body, { id, status: "completed", refine_status: "queued" }, "no results while queued");
    }

    // Force the refiner's failure for one job: its stored audio is deleted before refinement starts.
    const d = db(dataDir);
    const row = d.prepare("select blob_key from jobs where id = ?").get(goneId) as { blob_key: string };
    const okRow = d.prepare("select blob_key from jobs where id = ?").get(okId) as { blob_key: string };
    d.close();
    fs.rmSync(path.join(dataDir, "blobs", row.blob_key));
    assert.ok(fs.existsSync(path.join(dataDir, "blobs", okRow.blob_key)), "audio is kept until refinement is final");

    refiner = await startSori("worker", { ...baseEnv(dataDir), SORI_WORKER_REFINE: "1" });
    const seen = new Set<string>();
    const refined = await until("refinement of the kept job", async () => {
      const r = await read(api.url, token, okId, "?result=refined");
      seen.add(r.body.refine_status);
      if (r.body.refine_status === "processing")
        assert.deepEqual(Object.keys(r.body).sort(), ["id", "refine_status", "status"]);
      return r.body.refine_status === "completed" || r.body.refine_status === "failed" ? r.body : undefined;
    });
    assert.equal(refined.refine_status, "completed", JSON.stringify(refined));
    assert.deepEqual(Object.keys(refined.results), ["utterances"], "refined results hold utterances only");
    const [b, r] = [base.results.utterances, refined.results.utterances];
    assert.equal(r.length, b.length);
    for (let i = 0; i < b.length; i++) {
      assert.equal(r[i].start_at, b[i].start_at);
      assert.equal(r[i].duration, b[i].duration);
      assert.equal(r[i].spk, b[i].spk);
      assert.equal(r[i].lang, b[i].lang);
      assert.ok(r[i].msg.trim().length > 0);
      if (r[i].msg === b[i].msg) assert.deepEqual(r[i], b[i], "an unchanged utterance is returned as it was");
    }

    const failed = await until("refinement of the job without audio", async () => {
      const x = await read(api.url, token, goneId, "?result=refined");
      return x.body.refine_status === "failed" || x.body.refine_status === "completed" ? x.body : undefined;
    });
    assert.deepEqual(failed, {
      id: goneId,
      status: "completed",
      refine_status: "failed",
      refine_error: { code: "refiner_input_unavailable" },
    });
    const plain = await read(api.url, token, goneId);
    assert.equal(plain.body.status, "completed", "the base status stays completed");
    assert.ok(plain.body.results.utterances.length > 0);

    // Refinement is final for both: their audio is gone.
    assert.equal(fs.existsSync(path.join(dataDir, "blobs", okRow.blob_key)), false);
  });

  it("result=refined on a job without refinement is 400 H0001", async () => {
    const r = await submit(api.url, token, KO_SHORT, {});
    await waitFinal(api.url, token, String(r.body.id), 300_000);
    const x = await read(api.url, token, String(r.body.id), "?result=refined");
    assert.equal(x.status, 400);
    assert.equal(x.body.code, "H0001");
  });
});

describe(
  "enterprise: insight with the embedded model",
  { skip: fs.existsSync(GGUF) ? false : `${GGUF} missing (make install)` },
  () => {
    let sori: SoriProcess;
    let token: string;
    let dataDir: string;
    let env: NodeJS.ProcessEnv;
    let client: { client_id: string; client_secret: string };
    // An empty state folder: the server evaluates the shared prompt at start, as on a fresh clone.
    const stateDir = tempDataDir();

    before(async () => {
      dataDir = tempDataDir();
      env = { ...baseEnv(dataDir), SORI_INSIGHT_STATE_DIR: stateDir }; // the default threads (1) and time limit
      client = createClient(env, ["--tier", "enterprise"]);
      sori = await startSori("serve", env);
      token = await authenticate(sori.url, client.client_id, client.client_secret);
    });
    after(() => sori.stop());

    // Before the model was got ready at start, the first insight job of a process paid for loading it and evaluating
    // the shared prompt inside its 180 s limit: 183 s and `insight: []` on this 2-core machine. Now the job waits
    // for the model (never counted against its limit) while the worker evaluates the prompt once, about 45 s of one
    // core here; the bound leaves room for a loaded CI machine and still fails the old behaviour.
    const FIRST_JOB_MAX_S = 150;

    it(`the first job on a fresh server gets its insight within ${FIRST_JOB_MAX_S} s of submission`, async (t) => {
      const started = Date.now();
      const r = await submit(sori.url, token, EN_FILE, { model_name: "whisper", language: "en", use_insight: true });
      assert.equal(r.status, 200);
      const body = await waitFinal(sori.url, token, String(r.body.id), FIRST_JOB_MAX_S * 1000);
      const seconds = (Date.now() - started) / 1000;
      t.diagnostic(`${seconds.toFixed(1)} s: ${JSON.stringify(body.results.insight)}`);
      checkItem(body, /[A-Za-z]{3}/);
      assert.ok(seconds <= FIRST_JOB_MAX_S, `${seconds} s`);
      assert.ok(
        fs.readdirSync(stateDir).some((f) => f.startsWith("item-")),
        "the evaluated prompt is kept for the next start",
      );
    });

    function checkItem(body: any, script: RegExp): void {
      assert.equal(body.status, "completed", JSON.stringify(body));
      assert.ok(body.results.utterances.length > 0);
      assert.ok(Array.isArray(body.results.insight), JSON.stringify(body.results));
      if (body.results.insight.length !== 1) {
        const d = db(dataDir);
        const why = d.prepare("select insight_error from jobs where id = ?").get(body.id) as {
          insight_error: string | null;
        };
        d.close();
        assert.fail(`expected one insight item, got ${JSON.stringify(body.results.insight)}: ${why?.insight_error}`);
      }
      const item = body.results.insight[0];
      assert.deepEqual(Object.keys(item), ["title", "summary", "category"]);
      assert.ok(typeof item.title === "string" && item.title.trim().length > 0);
      assert.ok(typeof item.summary === "string" && item.summary.trim().length > 0);
      assert.ok(CATEGORIES.includes(item.category), item.category);
      assert.match(item.summary, script, "written in the transcript's language");
      assert.notEqual(item.title, item.summary);
    }

    it("Korean speech gets one Korean {title, summary, category}, steered by insight.prompt and keywords", async (t) => {
      const r = await submit(sori.url, token, KO_FILE, {
        use_insight: true,
        insight: { prompt: "봉사 활동 내용 위주로" },
        keywords: ["봉사"],
      });
      assert.equal(r.status, 200);
      const body = await waitFinal(sori.url, token, String(r.body.id), 600_000);
      t.diagnostic(JSON.stringify(body.results.insight));
      checkItem(body, /\p{Script=Hangul}/u);
    });

    it("English speech gets an English item", async (t) => {
      const config = {
        model_name: "whisper",
        language: "detect",
        language_candidates: ["en", "ko"],
        use_insight: true,
      };
      const r = await submit(sori.url, token, EN_FILE, config);
      assert.equal(r.status, 200);
      const body = await waitFinal(sori.url, token, String(r.body.id), 600_000);
      t.diagnostic(JSON.stringify(body.results.insight));
      checkItem(body, /[A-Za-z]{3}/);
      assert.doesNotMatch(body.results.insight[0].summary, /\p{Script=Hangul}/u);
    });

    it("`sori transcribe` runs the job pipeline a worker runs: use_insight gives the item", (t) => {
      const out = soriSync(
        [
          "transcribe",
          EN_FILE,
          "--no-progress",
          "--config",
          JSON.stringify({ model_name: "whisper", language: "en", use_insight: true }),
        ],
        { SORI_DATA_DIR: tempDataDir(), SORI_INSIGHT_STATE_DIR: stateDir },
      );
      const body = JSON.parse(out);
      t.diagnostic(JSON.stringify(body.results.insight));
      assert.equal(body.status, "completed");
      assert.equal(body.results.insight.length, 1, out);
      assert.ok(CATEGORIES.includes(body.results.insight[0].category));
    });

    it("a restart reads the evaluated prompt back instead of evaluating it again", async (t) => {
      await sori.stop();
      sori = await startSori("serve", env);
      token = await authenticate(sori.url, client.client_id, client.client_secret);
      const started = Date.now();
      const r = await submit(sori.url, token, KO_SHORT, { use_insight: true });
      const body = await waitFinal(sori.url, token, String(r.body.id), 600_000);
      t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(body.results.insight)}`);
      checkItem(body, /\p{Script=Hangul}/u);
      const ready = sori.logs.find((l) => l.includes('"insight model ready"'));
      assert.ok(ready, "the worker got the model ready at start");
      assert.match(ready, /item: read/);
    });
  },
);

describe("enterprise: an LLM that answers malformed JSON (OpenAI-compatible endpoint)", () => {
  let sori: SoriProcess;
  let llm: http.Server;
  let token: string;
  const asked: unknown[] = [];
  const MALFORMED = [
    '{"title": "<img src=x onerror=alert(1)>", "summary": "ok", "category": "hack", "extra": 1}',
    "not json {",
  ];

  before(async () => {
    llm = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        asked.push(JSON.parse(body));
        const content = MALFORMED[(asked.length - 1) % MALFORMED.length];
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
      });
    });
    await new Promise<void>((r) => llm.listen(0, "127.0.0.1", () => r()));
    const port = (llm.address() as { port: number }).port;
    const dataDir = tempDataDir();
    const env = {
      ...baseEnv(dataDir),
      SORI_INSIGHT_BASE_URL: `http://127.0.0.1:${port}/v1`,
      SORI_INSIGHT_MODEL_NAME: "test-model",
      SORI_INSIGHT_API_KEY: "k",
    };
    const c = createClient(env, ["--tier", "enterprise"]);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await sori.stop();
    await new Promise((r) => llm.close(r));
  });

  it("the job completes with insight [] and nothing of the answer in the response", async () => {
    const r = await submit(sori.url, token, KO_SHORT, { use_insight: true });
    const body = await waitFinal(sori.url, token, String(r.body.id), 300_000);
    assert.equal(body.status, "completed");
    assert.ok(body.results.utterances.length > 0);
    assert.deepEqual(body.results.insight, []);
    const text = JSON.stringify(body);
    assert.ok(!text.includes("onerror") && !text.includes("hack") && !text.includes("not json"), text);
    assert.equal(asked.length, 2, "one retry, then insight is given up");
    const req = asked[0] as {
      model: string;
      response_format: { type: string; json_schema: { schema: { properties: { category: { enum: string[] } } } } };
    };
    assert.equal(req.model, "test-model");
    assert.equal(req.response_format.type, "json_schema");
    // The model chooses among English labels that name who talks to whom; parseInsight maps them to the four values.
    assert.deepEqual(req.response_format.json_schema.schema.properties.category.enum, [
      "customer_calls_business",
      "work_colleagues",
      "family_friends",
      "unsolicited_offer_or_scam",
    ]);
  });
});
