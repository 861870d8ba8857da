// Fault harness with a history checker (issue 25, part 5, without the cut network link): N jobs of mixed length
// submitted to a scale-out deployment on one machine -- one API process and W worker processes on a private
// PostgreSQL cluster (test/helpers/pgCluster.ts) -- while faults are injected at random: kill -9 of a worker (with
// its engine), SIGTERM of a worker (drain: hand-back), kill -9 of the API, and a PostgreSQL restart. Every process
// that goes down is started again. Every submit and every read is recorded, and the history is checked:
//
//   nice -n 19 npx tsx bench/fault-harness.ts [--jobs 200] [--workers 3] [--faults 20] [--seed 1] [--json OUT]
//
// - lost: a job whose submit was answered with an id (accepted) that does not end `completed` with a result whose
//   `utterances` is a list. Must be 0.
// - duplicated: a job completed more than once (a worker's "job completed" log line, which is written only when the
//   fenced completion was stored, more than once for one id), or a job in the store that no submit created (an id
//   neither accepted nor from a submit whose answer was lost). Must be 0.
// - history violations: a job read `completed` and later read otherwise, or read with a different result. Must be 0.
// - unknown submits: the connection failed before the answer (the API was killed): the job may or may not exist; the
//   client submits the file again as a new job. Those that do exist must complete too (they are checked like the
//   accepted ones).
// - redone work: audio seconds a second or later attempt of a job started to decode again, less what its checkpoints
//   spared (the "resuming from checkpoint" offset): an upper bound of the audio decoded twice.
//
// Every kill -9 of a worker uses an attempt of its job, so SORI_MAX_ATTEMPTS is raised to 10 here. Exits 1 on any
// loss, duplicate or history violation.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { joinClips } from "../test/helpers/joinClips.js";
import { freePort, startPgCluster } from "../test/helpers/pgCluster.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../test/helpers/server.js";
import { rng } from "./rng.js";

const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "200" },
    workers: { type: "string", default: "3" },
    faults: { type: "string", default: "20" },
    seed: { type: "string", default: "1" },
    json: { type: "string" },
  },
});
const JOBS = Number(args.jobs);
const WORKERS = Number(args.workers);
const FAULTS = Number(args.faults);

const random = rng(Number(args.seed));
const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Mixed lengths: mostly short Korean clips, some 11 s, a few of 131 s (three English clips end to end, built at the
// start): three 60 s engine windows each, so a fault during one is resumed from its checkpoints.
const KO = fs
  .readdirSync(path.join(TESTDATA, "ko"))
  .filter((f) => f.endsWith(".wav"))
  .map((f) => path.join(TESTDATA, "ko", f));
const MID = path.join(TESTDATA, "en/whisper_jfk.flac");
let LONG = "";
const pickFile = (): { file: string; config: object } => {
  const r = random();
  if (r < 0.08) return { file: LONG, config: { model_name: "whisper", language: "en" } };
  if (r < 0.25) return { file: MID, config: { model_name: "whisper", language: "en" } };
  return { file: pick(KO), config: { model_name: "whisper", language: "ko" } };
};

interface Submit {
  n: number;
  file: string;
  outcome: "accepted" | "refused" | "unknown";
  id?: string;
  detail?: string;
}
interface Read {
  id: string;
  at: number;
  status: string;
  result?: string; // hash of the completed result
}

const cluster = await startPgCluster();
const dbName = await cluster.createDatabase("sori_faults");
const dataDir = tempDataDir();
const apiPort = await freePort();
const env: NodeJS.ProcessEnv = {
  SORI_DATABASE_URL: cluster.url(dbName),
  SORI_DATA_DIR: dataDir,
  SORI_PORT: String(apiPort),
  SORI_LEASE_S: "10",
  SORI_POLL_MS: "500",
  SORI_MAX_ATTEMPTS: "10",
  SORI_SHUTDOWN_GRACE_S: "2",
  SORI_ENGINE_WINDOW_S: "60",
  SORI_DEFAULT_MAX_CONCURRENT: "100000",
  SORI_DEFAULT_QUOTA_S: "0",
  SORI_DEFAULT_READ_RPS: "1000",
  SORI_DEFAULT_READ_BURST: "1000",
};
const url = `http://127.0.0.1:${apiPort}`;
const all: SoriProcess[] = []; // every process ever started, for the logs
let api: SoriProcess;
const workers: (SoriProcess | null)[] = [];
const submits: Submit[] = [];
const reads: Read[] = [];
const faults: { at_s: number; kind: string; target?: string }[] = [];
const t0 = Date.now();
const since = () => Number(((Date.now() - t0) / 1000).toFixed(1));

async function startApi(): Promise<void> {
  api = await startSori("serve", env, ["--no-workers"]);
  all.push(api);
}
async function startWorker(i: number): Promise<void> {
  const w = await startSori("worker", env);
  all.push(w);
  workers[i] = w;
}
function killTree(p: SoriProcess): Promise<void> {
  spawnSync("pkill", ["-KILL", "-P", String(p.child.pid)]);
  return p.stop("SIGKILL");
}

let token = "";
async function authenticate(client: { client_id: string; client_secret: string }): Promise<void> {
  for (;;) {
    try {
      const r = await fetch(`${url}/v1/authenticate`, {
        method: "POST",
        body: new URLSearchParams({ client_id: client.client_id, client_secret: client.client_secret }),
      });
      if (r.status === 200) {
        token = ((await r.json()) as { access_token: string }).access_token;
        return;
      }
    } catch {
      // the API is down: try again
    }
    await sleep(500);
  }
}

async function submitOne(n: number): Promise<void> {
  const { file, config } = pickFile();
  for (;;) {
    const form = new FormData();
    form.append("config", JSON.stringify(config));
    form.append("file", new Blob([fs.readFileSync(file)]), path.basename(file));
    try {
      const r = await fetch(`${url}/v1/transcribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      const body = (await r.json()) as { id?: string; code?: string };
      if (r.status === 200 && body.id) {
        submits.push({ n, file, outcome: "accepted", id: body.id });
        return;
      }
      submits.push({ n, file, outcome: "refused", detail: `${r.status} ${body.code}` });
      if (r.status < 500) return; // a refusal is an answer; an E500 (the store restarting) is tried again
    } catch (err) {
      submits.push({ n, file, outcome: "unknown", detail: (err as Error).message });
    }
    await sleep(1000);
  }
}

async function readOne(id: string): Promise<string | null> {
  try {
    const r = await fetch(`${url}/v1/transcribe/${id}`, { headers: { authorization: `Bearer ${token}` } });
    if (r.status !== 200) {
      await r.arrayBuffer();
      return null; // E500 while the store restarts: no answer about the job
    }
    const body = (await r.json()) as { status: string; results?: { utterances?: unknown } };
    const read: Read = { id, at: Date.now(), status: body.status };
    if (body.status === "completed") {
      if (!Array.isArray(body.results?.utterances)) read.status = "completed-without-result";
      read.result = createHash("sha256").update(JSON.stringify(body.results)).digest("hex");
    }
    reads.push(read);
    return read.status;
  } catch {
    return null; // the API is down
  }
}

async function injectFault(kind: string): Promise<void> {
  if (kind === "kill-worker" || kind === "term-worker") {
    const i = Math.floor(random() * WORKERS);
    const w = workers[i];
    if (!w) return;
    workers[i] = null;
    faults.push({ at_s: since(), kind, target: `worker ${i}` });
    if (kind === "kill-worker") await killTree(w);
    else await w.stop("SIGTERM");
    await startWorker(i);
  } else if (kind === "kill-api") {
    faults.push({ at_s: since(), kind });
    await killTree(api);
    await sleep(500 + random() * 1500);
    await startApi();
  } else {
    faults.push({ at_s: since(), kind });
    cluster.stopServer();
    await sleep(1000 + random() * 3000);
    cluster.startServer();
  }
}

/** The long input: three shared clips (131 s, three 60 s windows). */
function buildLong(out: string): void {
  joinClips(out, ["en/earnings22_1_4482311_3_62.wav", "en/earnings22_3_4483589_261_321.wav", "en/whisper_jfk.flac"]);
  LONG = out;
}

let exitCode = 0;
try {
  buildLong(path.join(dataDir, "long-131s.wav"));
  const client = createClient(env);
  await startApi();
  for (let i = 0; i < WORKERS; i++) await startWorker(i);
  await authenticate(client);
  console.log(`${JOBS} jobs, ${WORKERS} workers, ${FAULTS} faults; API ${url}`);

  // Submit in the background, three at a time, spread over the time the faults take (about 8 s each), so that API
  // kills and store restarts also hit submits; read every accepted job until it is final, as a polling client does.
  let next = 0;
  const paceMs = (FAULTS * 8000 * 3) / JOBS;
  const submitters = Array.from({ length: 3 }, async () => {
    while (next < JOBS) {
      await submitOne(next++);
      await sleep(paceMs * (0.5 + random()));
    }
  });
  const final = new Set<string>();
  let submitting = true;
  const reader = (async () => {
    while (submitting || submits.some((s) => s.id && !final.has(s.id))) {
      for (const s of submits) {
        if (!s.id || final.has(s.id)) continue;
        const status = await readOne(s.id);
        if (status && status !== "transcribing") final.add(s.id);
      }
      await sleep(1000);
    }
  })();
  // Faults while jobs run: one every 4 to 12 s, the kinds in turn at random.
  const kinds = ["kill-worker", "kill-worker", "term-worker", "kill-api", "restart-postgres"];
  for (let f = 0; f < FAULTS; f++) {
    await sleep(4000 + random() * 8000);
    await injectFault(pick(kinds));
    console.log(
      `fault ${f + 1}/${FAULTS} at ${since()} s: ${faults[faults.length - 1]?.kind}; ${final.size} jobs final`,
    );
  }
  await Promise.all(submitters);
  submitting = false;
  const deadline = Date.now() + 30 * 60_000;
  while (submits.some((s) => s.id && !final.has(s.id)) && Date.now() < deadline) await sleep(1000);
  submitting = false;
  await Promise.race([reader, sleep(5000)]);
  // Read every job once more after the end, for the history.
  for (const s of submits) if (s.id) await readOne(s.id);

  // The store's view: every job, its transcribe task and what the workers logged about it.
  const db = new pg.Client({ connectionString: cluster.url(dbName) });
  await db.connect();
  const rows = (
    await db.query<{ id: string; state: string; attempts: number; audio_s: number | null; result: string | null }>(
      "SELECT j.id, t.state, t.attempts, j.audio_s, j.result FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe'",
    )
  ).rows;
  await db.end();
  const logs = all.flatMap((p) =>
    p.logs.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>),
  );
  const perJob = (msg: string) => {
    const m = new Map<string, Record<string, unknown>[]>();
    for (const l of logs)
      if (l.msg === msg && typeof l.job_id === "string") m.set(l.job_id, [...(m.get(l.job_id) ?? []), l]);
    return m;
  };
  const completions = perJob("job completed");
  const starts = perJob("job started");
  const resumes = perJob("resuming from checkpoint");

  const accepted = new Set(submits.filter((s) => s.outcome === "accepted").map((s) => s.id!));
  const unknownSubmits = submits.filter((s) => s.outcome === "unknown").length;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const lost = [...accepted].filter((id) => {
    const r = byId.get(id);
    return !r || r.state !== "completed" || !r.result || !Array.isArray(JSON.parse(r.result).utterances);
  });
  const phantom = rows.filter((r) => !accepted.has(r.id)); // from submits whose answer was lost
  const phantomUnfinished = phantom.filter((r) => r.state !== "completed");
  const duplicated = rows.filter((r) => (completions.get(r.id)?.length ?? 0) > 1).map((r) => r.id);
  const violations: string[] = [];
  const history = new Map<string, Read[]>();
  for (const r of reads) history.set(r.id, [...(history.get(r.id) ?? []), r]);
  for (const [id, hs] of history) {
    const firstDone = hs.findIndex((h) => h.status === "completed");
    if (hs.some((h) => h.status === "completed-without-result")) violations.push(`${id}: completed without a result`);
    if (firstDone < 0) continue;
    if (hs.slice(firstDone).some((h) => h.status !== "completed" || h.result !== hs[firstDone]!.result))
      violations.push(`${id}: read completed, then otherwise`);
  }
  if (phantom.length > unknownSubmits) violations.push(`${phantom.length} jobs from ${unknownSubmits} unknown submits`);
  let redoneS = 0;
  let attemptsAgain = 0;
  for (const r of rows) {
    const s = starts.get(r.id) ?? [];
    const res = (resumes.get(r.id) ?? []).map((l) => Number(l.offset_s));
    for (let k = 1; k < s.length; k++) {
      attemptsAgain++;
      redoneS += Math.max(0, (r.audio_s ?? 0) - (res.shift() ?? 0));
    }
  }
  const report = {
    jobs_submitted: JOBS,
    accepted: accepted.size,
    refused: submits.filter((s) => s.outcome === "refused").length,
    unknown_submits: unknownSubmits,
    jobs_from_unknown_submits: phantom.length,
    faults: faults.length,
    faults_by_kind: Object.fromEntries(kinds.map((k) => [k, faults.filter((f) => f.kind === k).length])),
    completed: rows.filter((r) => r.state === "completed").length,
    lost: lost.length + phantomUnfinished.length,
    duplicated: duplicated.length,
    history_violations: violations.length,
    reads: reads.length,
    attempts_started_again: attemptsAgain,
    resumed_from_checkpoint: [...resumes.values()].reduce((a, x) => a + x.length, 0),
    audio_s_total: Number(rows.reduce((a, r) => a + (r.audio_s ?? 0), 0).toFixed(1)),
    redone_audio_s_upper_bound: Number(redoneS.toFixed(1)),
    wall_s: since(),
    examples: { lost: lost.slice(0, 5), duplicated: duplicated.slice(0, 5), violations: violations.slice(0, 5) },
  };
  console.log(JSON.stringify(report, null, 2));
  if (args.json) fs.writeFileSync(args.json, JSON.stringify({ ...report, fault_log: faults }, null, 2));
  if (report.lost || report.duplicated || report.history_violations) exitCode = 1;
} finally {
  await Promise.all(all.map((p) => killTree(p)));
  cluster.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
