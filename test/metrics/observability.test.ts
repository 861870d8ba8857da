// /metrics, /readyz and the logs, against the real `sori` processes: a serve with one worker and the real engine
// (SQLite), then an API host and a `sori worker` on a PostgreSQL database that the test drops under them.
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { createLogger } from "../../src/log.js";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

// 2.1 s of Korean speech: the shortest real clip of the shared test data.
const CLIP = path.join(TESTDATA, "ko", "deeply_studioapt_sub100101a00063.wav");

const get = async (url: string): Promise<{ status: number; type: string; text: string }> => {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get("content-type") ?? "", text: await r.text() };
};

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("observability of one serve process (SQLite, one worker, real engine)", () => {
  let sori: SoriProcess;
  let creds: { client_id: string; client_secret: string };
  let dataDir: string;

  before(async () => {
    dataDir = tempDataDir();
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "100" };
    creds = createClient(env);
    // trace: every line the process can write is captured, so the secret check below covers them all.
    sori = await startSori("serve", { ...env, SORI_LOG_LEVEL: "trace" });
  });
  after(async () => {
    await sori?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("/healthz answers; /readyz says the idle engine is not loaded, starts it, then answers 200", async () => {
    assert.deepEqual(JSON.parse((await get(`${sori.url}/healthz`)).text), { status: "ok" });
    const first = await get(`${sori.url}/readyz`);
    // No job has run, so the engine is not up yet (unless the process ever starts engines eagerly: then 200).
    if (first.status !== 200) {
      assert.equal(first.status, 503, first.text);
      const body = JSON.parse(first.text);
      assert.deepEqual(body.not_ready, ["engine"]);
      assert.equal(body.checks.store, "ok");
      assert.equal(body.checks.engine, "starting");
    }
    const ready = await until("readyz 200", async () => {
      const r = await get(`${sori.url}/readyz`);
      return r.status === 200 ? JSON.parse(r.text) : undefined;
    });
    assert.deepEqual(ready, { status: "ready", checks: { store: "ok", engine: "loaded" } });
  });

  it("a transcription and a refused request show in /metrics, which names no client, job or secret", async () => {
    const token = await authenticate(sori.url, creds.client_id, creds.client_secret);
    const job = await submit(sori.url, token, CLIP, { model_name: "whisper", language: "ko" });
    assert.equal(job.status, 200, JSON.stringify(job.body));
    const done = await waitFinal(sori.url, token, String(job.body.id));
    assert.equal(done.status, "completed", JSON.stringify(done));
    const bad = await submit(sori.url, token, CLIP, "{not json");
    assert.equal(bad.status, 400);

    const m = await get(`${sori.url}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.type, /^text\/plain; version=0\.0\.4/);
    const t = m.text;
    assert.equal(sample(t, "sori_queue_jobs", { state: "queued" }), 0);
    assert.equal(sample(t, "sori_queue_jobs", { state: "running" }), 0);
    assert.equal(sample(t, "sori_job_duration_seconds_count", { outcome: "completed" }), 1);
    assert.equal(sample(t, "sori_job_queue_wait_seconds_count"), 1);
    assert.equal(sample(t, "sori_stage_duration_seconds_count", { stage: "transcribe" }), 1);
    assert.equal(sample(t, "sori_stage_duration_seconds_count", { stage: "text" }), 1);
    assert.equal(sample(t, "sori_stage_duration_seconds_count", { stage: "store" }), 1);
    assert.ok(Math.abs(sample(t, "sori_audio_seconds_processed_total")! - 2.073) < 0.05, t);
    assert.equal(sample(t, "sori_job_real_time_factor_count"), 1);
    assert.ok(sample(t, "sori_job_real_time_factor_sum")! > 0);
    assert.equal(sample(t, "sori_errors_total", { source: "api", code: bad.body.code as string }), 1);
    assert.ok(sample(t, "process_cpu_seconds_total")! > 0, "default process metrics");
    assert.ok(sample(t, "nodejs_eventloop_lag_seconds") !== undefined, "default Node.js metrics");
    for (const leak of [creds.client_id, creds.client_secret, token, String(job.body.id)])
      assert.ok(!t.includes(leak), "metrics leak");
  });

  it("logs: job lines carry job_id and client_id; no secret, token or Authorization header anywhere", async () => {
    const lines = sori.logs.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    const jobLines = lines.filter((l) => ["job queued", "job started", "job completed"].includes(String(l.msg)));
    assert.equal(jobLines.length, 3, "queued, started, completed");
    for (const l of jobLines) {
      assert.ok(l.job_id && l.client_id === creds.client_id, JSON.stringify(l));
    }
    const all = sori.logs.join("\n");
    const token = all.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    assert.equal(token, null, "a JWT in the logs");
    assert.ok(!all.includes(creds.client_secret), "the client secret in the logs");
    assert.ok(!/bearer /i.test(all), "an Authorization header in the logs");
  });
});

describe("pino redaction of credential fields", () => {
  it("censors the Authorization header, cookies and secret-named fields at any of the two top levels", () => {
    const out: string[] = [];
    const sink = new Writable({ write: (c, _e, cb) => (out.push(String(c)), cb()) });
    const log = createLogger("info", sink);
    log.info(
      {
        req: { headers: { authorization: "Bearer tok1", cookie: "s=tok2" } },
        busboyOptions: { headers: { authorization: "Bearer tok7" } },
        client_secret: "sec3",
        body: { access_token: "tok4", client_secret: "sec5" },
        insight: { apiKey: "key6" },
      },
      "x",
    );
    const line = out.join("");
    for (const s of ["tok1", "tok2", "sec3", "tok4", "sec5", "key6", "tok7"])
      assert.ok(!line.includes(s), `${s} in ${line}`);
    assert.match(line, /\[redacted\]/);
  });
});

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

const pgDown = await pgUnavailable();

describe(
  "PostgreSQL hosts: SORI_METRICS=0, a worker's metrics port, and /readyz with the store gone",
  { skip: pgDown ?? false },
  () => {
    let db: PgDatabase | undefined;
    let api: SoriProcess;
    let worker: SoriProcess;
    let workerUrl: string;
    let dataDir: string;

    before(async () => {
      db = await createPgDatabase("sori_obs");
      dataDir = tempDataDir();
      const env = { SORI_DATA_DIR: dataDir, SORI_DATABASE_URL: db.url, SORI_PORT: "0" };
      api = await startSori("serve", { ...env, SORI_METRICS: "0" }, ["--no-workers"]);
      const port = await freePort();
      workerUrl = `http://127.0.0.1:${port}`;
      worker = await startSori("worker", { ...env, SORI_METRICS_PORT: String(port), SORI_WORKERS: "1" });
    });
    after(async () => {
      await api?.stop();
      await worker?.stop();
      await db?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("an API-only host is ready without an engine; SORI_METRICS=0 leaves /metrics unrouted", async () => {
      const r = await get(`${api.url}/readyz`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(JSON.parse(r.text), { status: "ready", checks: { store: "ok" } });
      const m = await get(`${api.url}/metrics`);
      assert.equal(m.status, 404);
      assert.equal(JSON.parse(m.text).code, "H0004");
    });

    it("`sori worker` serves /metrics, /healthz and /readyz on SORI_METRICS_PORT", async () => {
      const m = await get(`${workerUrl}/metrics`);
      assert.equal(m.status, 200);
      assert.equal(sample(m.text, "sori_queue_jobs", { state: "queued" }), 0);
      assert.equal((await get(`${workerUrl}/healthz`)).status, 200);
    });

    it("with the database dropped, /readyz answers 503 naming the store", async () => {
      await db!.drop();
      for (const base of [api.url, workerUrl]) {
        const r = await get(`${base}/readyz`);
        assert.equal(r.status, 503, r.text);
        const body = JSON.parse(r.text);
        assert.ok(body.not_ready.includes("store"), r.text);
        assert.equal(body.checks.store, "unreachable");
      }
      // Still scrapeable: the queue gauge keeps its last value.
      assert.equal((await get(`${workerUrl}/metrics`)).status, 200);
    });
  },
);
