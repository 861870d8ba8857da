// Fault tests on a PostgreSQL store. The store is a private cluster (test/helpers/pgCluster.ts),
// so that it can be restarted mid-run; API and workers are separate `sori` processes sharing a data dir, as in
// scale-out. The engine killed on every attempt, a SIGTERM'd worker (finishes within the grace period, or hands the
// job back), kill -9 of a worker mid-job (crash.test.ts does it on SQLite), PostgreSQL restarted mid-run, and the
// API killed during an upload.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { type PgCluster, pgClusterUnavailable, startPgCluster } from "../helpers/pgCluster.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const HALF_MINUTE = path.join(TESTDATA, "multi/pyannote_sample.wav"); // 30 s of speech: seconds of work
const LONG = path.join(TESTDATA, "en/earnings22_1_4482311_3_62.wav"); // 60 s
const MID = path.join(TESTDATA, "en/whisper_jfk.flac"); // 11 s
const SHORT = [
  "ko/deeply_studioapt_sub100101a00063.wav",
  "ko/deeply_anechoic_sub100122a00017.wav",
  "ko/deeply_dancestudio_sub100111a00062.wav",
].map((f) => path.join(TESTDATA, f));
const EN = { model_name: "whisper", language: "detect", language_candidates: ["en"] };
const KO = { model_name: "whisper", language: "ko" };

interface JobRow {
  seq: number;
  id: string;
  state: string;
  attempts: number;
  locked_by: string | null;
  error_code: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("faults on a PostgreSQL store", { skip: pgClusterUnavailable() ?? false, timeout: 300_000 }, () => {
  let cluster: PgCluster;
  let dataDir: string;
  let env: Record<string, string>;
  let api: SoriProcess;
  let token: string;
  const procs: SoriProcess[] = [];

  const start = async (
    command: "serve" | "worker",
    extra: Record<string, string> = {},
    args: string[] = [],
  ): Promise<SoriProcess> => {
    const p = await startSori(command, { ...env, ...extra }, args);
    procs.push(p);
    return p;
  };
  // A fresh connection per query: the server is restarted under these tests.
  const query = async <R extends object>(text: string, params: unknown[] = []): Promise<R[]> => {
    const c = new pg.Client({ connectionString: env.SORI_DATABASE_URL });
    await c.connect();
    try {
      return (await c.query(text, params)).rows as R[];
    } finally {
      await c.end();
    }
  };
  const job = async (id: string): Promise<JobRow> =>
    (
      await query<JobRow>(
        "SELECT j.seq, j.id, t.state, t.attempts, t.locked_by, t.error_code FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' WHERE j.id = $1",
        [id],
      )
    )[0]!;
  const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> => {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
      await sleep(100);
    }
  };
  const enginePids = (worker: SoriProcess): number[] =>
    spawnSync("pgrep", ["-P", String(worker.child.pid), "-f", "sori_engine"], { encoding: "utf8" })
      .stdout.split("\n")
      .filter(Boolean)
      .map(Number);
  const exited = (p: SoriProcess): Promise<number | null> =>
    p.child.exitCode !== null || p.child.signalCode !== null
      ? Promise.resolve(p.child.exitCode)
      : new Promise((r) => p.child.once("exit", (code) => r(code)));
  /** Ids of the jobs a worker process logged as completed. */
  const completedBy = (p: SoriProcess): string[] =>
    p.logs.filter((l) => l.includes('"job completed"')).map((l) => (JSON.parse(l) as { job_id: string }).job_id);
  const workerId = (p: SoriProcess): string => `:${p.child.pid}:`;

  before(async () => {
    cluster = await startPgCluster();
    dataDir = tempDataDir();
    env = {
      SORI_DATABASE_URL: cluster.url(await cluster.createDatabase()),
      SORI_DATA_DIR: dataDir,
      SORI_PORT: "0",
      SORI_POLL_MS: "100",
      SORI_LEASE_S: "3",
      SORI_MAX_ATTEMPTS: "3",
      SORI_SWEEP_S: "1",
      SORI_DEFAULT_MAX_CONCURRENT: "100",
      SORI_DEFAULT_READ_RPS: "1000",
      SORI_DEFAULT_READ_BURST: "1000",
    };
    const c = createClient(env);
    api = await start("serve", {}, ["--no-workers"]);
    token = await authenticate(api.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
    cluster?.destroy();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("engine killed on every attempt: the job fails with E500 after SORI_MAX_ATTEMPTS, and the worker recovers", async () => {
    const worker = await start("worker");
    const id = String((await submit(api.url, token, MID, EN)).body.id);
    // Kill every engine the worker starts until the job is final: mid-load or mid-decode, each attempt dies.
    let kills = 0;
    let final = false;
    const killer = (async () => {
      while (!final) {
        for (const pid of enginePids(worker)) {
          try {
            process.kill(pid, "SIGKILL");
            kills += 1;
          } catch {
            // gone already
          }
        }
        await sleep(50);
      }
    })();
    const t0 = Date.now();
    let body: any;
    try {
      body = await waitFinal(api.url, token, id, 90_000);
    } finally {
      final = true;
      await killer;
    }
    assert.equal(body.status, "failed", JSON.stringify(body));
    assert.equal(body.error.code, "E500");
    const row = await job(id);
    assert.equal(row.attempts, 3, "one attempt per SORI_MAX_ATTEMPTS");
    assert.ok(kills >= 3, `an engine was killed in every attempt (${kills} kills)`);
    console.log(
      `faults: engine killed ${kills} times; job failed E500 after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );

    // The worker is alive and restarts its engine for the next job.
    assert.equal(worker.child.exitCode, null);
    const next = String((await submit(api.url, token, SHORT[0]!, KO)).body.id);
    const ok = await waitFinal(api.url, token, next);
    assert.equal(ok.status, "completed", JSON.stringify(ok));
    await worker.stop("SIGTERM");
  });

  it("SIGTERM mid-job with a long grace: the worker finishes its job, claims nothing more, and exits", async () => {
    const worker = await start("worker", { SORI_SHUTDOWN_GRACE_S: "120" });
    const a = String((await submit(api.url, token, MID, EN)).body.id);
    const b = String((await submit(api.url, token, SHORT[1]!, KO)).body.id);
    await until("job A running", async () => (await job(a)).state === "running");
    assert.ok((await job(a)).locked_by?.includes(workerId(worker)));
    worker.child.kill("SIGTERM");
    const code = await exited(worker);
    assert.equal(code, 0, worker.logs.slice(-5).join("\n"));
    const ra = await job(a);
    assert.equal(ra.state, "completed", "the in-flight job was finished within the grace period");
    assert.equal(ra.attempts, 1);
    assert.deepEqual(completedBy(worker), [a]);
    const rb = await job(b);
    assert.equal(rb.state, "queued", "a stopping worker claims nothing more");
    assert.equal(rb.attempts, 0);
  });

  it("SIGTERM mid-job past the grace: the job is handed back and another worker takes it at once", async () => {
    // A long lease: the job must move on because it was handed back, not because a lease ran out. Grace 0 hands
    // back at once; both workers have it, and the one that claims the job is the one stopped.
    const workers = await Promise.all(
      [0, 1].map(() => start("worker", { SORI_LEASE_S: "120", SORI_SHUTDOWN_GRACE_S: "0" })),
    );
    // The job left queued by the previous test is taken first: nothing is lost across a worker's shutdown.
    const left = (
      await query<{ id: string }>(
        "SELECT job_id AS id FROM tasks WHERE kind = 'transcribe' AND state IN ('queued', 'running')",
      )
    ).map((r) => r.id);
    for (const id of left) assert.equal((await waitFinal(api.url, token, id)).status, "completed");

    const long = String((await submit(api.url, token, HALF_MINUTE, EN)).body.id);
    await until("the job running", async () => (await job(long)).state === "running");
    const holder = (await job(long)).locked_by ?? "";
    const stopping = workers.find((w) => holder.includes(workerId(w)));
    assert.ok(stopping, `a worker of ours holds the job (${holder})`);
    const other = workers.find((w) => w !== stopping)!;
    await sleep(300);
    const t0 = Date.now();
    stopping.child.kill("SIGTERM");
    assert.equal(await exited(stopping), 0, stopping.logs.slice(-5).join("\n"));
    const exitS = (Date.now() - t0) / 1000;
    assert.ok(exitS < 10, `the worker exits promptly with grace 0 (${exitS} s)`);
    assert.ok(
      stopping.logs.some((l) => l.includes("handed back")),
      "the hand-back is logged",
    );
    assert.ok(!completedBy(stopping).includes(long));

    await until(
      "the other worker takes the job",
      async () => (await job(long)).locked_by?.includes(workerId(other)) ?? false,
      10_000,
    );
    const takenS = (Date.now() - t0) / 1000;
    const body = await waitFinal(api.url, token, long);
    assert.equal(body.status, "completed", JSON.stringify(body));
    assert.equal((await job(long)).attempts, 1, "the handed-back attempt was returned");
    assert.ok(completedBy(other).includes(long));
    console.log(
      `faults: SIGTERM grace 0: worker exited in ${exitS.toFixed(1)} s, job re-claimed ${takenS.toFixed(1)} s after the signal`,
    );
    await other.stop("SIGTERM");
  });

  it("kill -9 of a worker mid-job: the other worker completes the job once the lease has expired", async () => {
    const workers = [await start("worker"), await start("worker")];
    const id = String((await submit(api.url, token, MID, EN)).body.id);
    await until("job running", async () => (await job(id)).state === "running");
    const holder = (await job(id)).locked_by ?? "";
    const victim = workers.find((w) => holder.includes(workerId(w)));
    const survivor = workers.find((w) => w !== victim)!;
    assert.ok(victim, `a worker of ours holds the job (${holder})`);
    await sleep(300);
    // As a host crash would: the worker and its engine die together, nothing is recorded.
    spawnSync("pkill", ["-KILL", "-P", String(victim.child.pid)]);
    await victim.stop("SIGKILL");
    const t0 = Date.now();
    assert.equal((await job(id)).state, "running", "the dead worker could not record anything");

    await until(
      "the other worker takes the job",
      async () => (await job(id)).locked_by?.includes(workerId(survivor)) ?? false,
      30_000,
    );
    const takenS = (Date.now() - t0) / 1000;
    const body = await waitFinal(api.url, token, id);
    assert.equal(body.status, "completed", JSON.stringify(body));
    assert.equal((await job(id)).attempts, 2);
    assert.deepEqual(completedBy(survivor), [id]);
    console.log(
      `faults: kill -9 of the worker: the other worker took the job after ${takenS.toFixed(1)} s (lease ${env.SORI_LEASE_S} s) ` +
        `and completed it ${((Date.now() - t0) / 1000).toFixed(1)} s after the kill`,
    );
    await survivor.stop("SIGTERM");
  });

  it("PostgreSQL restarted mid-run: API and workers reconnect; every job completes exactly once", async () => {
    const workers = [await start("worker"), await start("worker")];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(String((await submit(api.url, token, SHORT[i % SHORT.length]!, KO)).body.id));
    await until("some jobs done, some not", async () => {
      const n = (
        await query<{ n: number }>(
          "SELECT count(*)::int AS n FROM tasks WHERE kind = 'transcribe' AND job_id = ANY($1) AND state = 'completed'",
          [ids],
        )
      )[0]!.n;
      return n >= 1;
    });
    const unfinished = (
      await query<{ n: number }>(
        "SELECT count(*)::int AS n FROM tasks WHERE kind = 'transcribe' AND job_id = ANY($1) AND state IN ('queued', 'running')",
        [ids],
      )
    )[0]!.n;
    assert.ok(unfinished > 0, "the restart happens mid-run");
    // Worker processes LISTEN for job wake-ups on a connection of their own (src/jobs/wakeup.ts, where present).
    const listeners = async (): Promise<number> =>
      (
        await query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'sori-wakeup' AND datname = current_database()",
        )
      )[0]!.n;
    const listening = await listeners();
    const t0 = Date.now();
    cluster.stopServer();
    // While the store is down, a read fails fast with the spec's error body (E500), instead of hanging.
    const down = await read(api.url, token, ids[0]!);
    assert.ok(
      down.status >= 500 && typeof down.body.code === "string" && typeof down.body.msg === "string",
      JSON.stringify(down),
    );
    await sleep(1500); // long enough for every process to hit refused connections
    cluster.startServer();
    const downS = (Date.now() - t0) / 1000;

    // The API answers again once the server is back (a request or two may still meet a dropped connection).
    await until(
      "the API reaches the store again",
      async () => (await read(api.url, token, ids[0]!)).status === 200,
      30_000,
    );
    for (let i = 0; i < 4; i++) {
      const r = await submit(api.url, token, SHORT[i % SHORT.length]!, KO);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(String(r.body.id));
    }
    for (const id of ids) {
      const body = await waitFinal(api.url, token, id);
      assert.equal(body.status, "completed", `${id}: ${JSON.stringify(body)}`);
      assert.ok(body.results.utterances.length > 0);
    }
    for (const p of [api, ...workers])
      assert.equal(p.child.exitCode, null, `still running:\n${p.logs.slice(-5).join("\n")}`);
    if (listening > 0)
      await until("the wake-up listeners are back", async () => (await listeners()) === listening, 40_000);
    const rows = await query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1)", [ids]);
    assert.equal(rows.length, ids.length, "one row per accepted job");
    const completions = workers.flatMap(completedBy).filter((id) => ids.includes(id));
    assert.deepEqual([...completions].sort(), [...ids].sort(), "each job completed exactly once");
    console.log(
      `faults: PostgreSQL down ${downS.toFixed(1)} s with ${unfinished} jobs unfinished (API answered ${down.status} ${down.body.code} meanwhile); ` +
        `${ids.length} jobs completed once each; per worker ${workers.map((w) => completedBy(w).length).join(" + ")}; ` +
        `wake-up listeners ${listening} before and after`,
    );
    await Promise.all(workers.map((w) => w.stop("SIGTERM")));
  });

  it("API killed during an upload: no job row, and the sweep removes the partial file", async () => {
    const files = (): string[] =>
      ["blobs", "spool"].flatMap((d) => {
        const dir = path.join(dataDir, d);
        return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : [];
      });
    const before = new Set(files());
    const jobsBefore = (await query<{ n: number }>("SELECT count(*)::int AS n FROM jobs"))[0]!.n;

    // A chunked multipart upload that sends 64 KiB of the file part, then stalls.
    const { hostname, port } = new URL(api.url);
    const boundary = "sori-fault-test";
    const req = http.request({
      host: hostname,
      port,
      method: "POST",
      path: "/v1/transcribe",
      headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${boundary}` },
    });
    req.on("error", () => {}); // the connection dies with the API
    req.write(`--${boundary}\r\ncontent-disposition: form-data; name="config"\r\n\r\n${JSON.stringify(EN)}\r\n`);
    req.write(
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`,
    );
    req.write(fs.readFileSync(LONG).subarray(0, 64 * 1024));
    let partial: string[] = [];
    await until(
      "the upload reaches the disk",
      () => {
        partial = files().filter((f) => !before.has(f) && fs.statSync(f, { throwIfNoEntry: false })?.size);
        return partial.length > 0;
      },
      15_000,
    );
    await api.stop("SIGKILL");
    req.destroy();
    assert.ok(
      partial.every((f) => fs.existsSync(f)),
      "the killed API left its partial upload behind",
    );
    assert.equal(
      (await query<{ n: number }>("SELECT count(*)::int AS n FROM jobs"))[0]!.n,
      jobsBefore,
      "no job row for the cut-off upload",
    );

    // The next API process (any serve or worker process runs the sweep) removes it once it has been untouched
    // for SORI_ORPHAN_AGE_S (an upload's spool file is written to until the moment it is adopted).
    api = await start("serve", { SORI_ORPHAN_AGE_S: "1" }, ["--no-workers"]);
    await until("the sweep removes the partial upload", () => partial.every((f) => !fs.existsSync(f)), 20_000);
    assert.equal((await query<{ n: number }>("SELECT count(*)::int AS n FROM jobs"))[0]!.n, jobsBefore);
  });
});
