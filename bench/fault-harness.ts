// Fault harness with a history checker: N jobs of mixed length submitted to a scale-out deployment on one machine --
// two API hosts and W worker hosts, each in its own network namespace, on a private PostgreSQL cluster reached over
// the lab network (bench/faultLab.ts) -- while faults are injected at random: kill -9 of a worker (with its engine),
// SIGTERM of a worker (drain: hand-back), kill -9 of an API host, a PostgreSQL restart, and a cut network link: a
// worker's or an API host's link is cut for a while (its cable pulled, or its frames dropped as by a firewall rule:
// test/helpers/netns.ts) and restored. A worker cut off long enough loses its lease; another worker takes the job
// (from its checkpoints), and the cut-off one, once back, must write neither a checkpoint nor a result for it.
// Every process that goes down is started again. Clients spread submits and reads over both API hosts, and turn to
// the other one when a request fails or gets no answer in time (as a load balancer would). Every submit and every
// read is recorded, and the history is checked:
//
//   nice -n 19 npx tsx bench/fault-harness.ts [--jobs 200] [--workers 3] [--faults 30] [--seed 1] [--json OUT]
//     [--logs DIR]   (every process's log, as DIR/<host>.<generation>.log)
//
// - lost: a job whose submit was answered with an id (accepted) that does not end `completed` with a result whose
//   `utterances` is a list. Must be 0.
// - duplicated: a job completed more than once (a worker's "job completed" log line, which is written only when the
//   fenced completion was stored, more than once for one id), or a job in the store that no submit created (an id
//   neither accepted nor from a submit whose answer was lost). Must be 0.
// - history violations: a job read `completed` and later read otherwise, or read with a different result. Must be 0.
// - unfenced writes: a checkpoint or a completion written by a process that did not hold the task at that moment
//   (bench/fenceAudit.ts, triggers in the database). Must be 0. Beside it, the fenced writes that were refused:
//   checkpoints not stored and results discarded because the lease was gone.
// - crashed: a process that exited although the harness neither killed nor stopped it. Must be 0.
// - unknown submits: no answer came (the API host was killed or cut off): the job may or may not exist; the client
//   submits the file again as a new job. Those that do exist must complete too (they are checked like the
//   accepted ones).
// - redone work: audio seconds a second or later attempt of a job started to decode again, less what its checkpoints
//   spared (the "resuming from checkpoint" offset): an upper bound of the audio decoded twice.
//
// Every kill -9 of a worker, and every lease lost to a cut, uses an attempt of its job, so SORI_MAX_ATTEMPTS is
// raised to 10 here. Needs root (network namespaces). Exits 1 on any loss, duplicate, history violation, unfenced
// write or crash.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { joinClips } from "../test/helpers/joinClips.js";
import { type LinkCut, netnsUnavailable } from "../test/helpers/netns.js";
import { pgClusterUnavailable } from "../test/helpers/pgCluster.js";
import { createClient, TESTDATA, tempDataDir } from "../test/helpers/server.js";
import { startFaultLab } from "./faultLab.js";
import { fenceReport } from "./fenceAudit.js";
import { sampleCpu } from "./procCpu.js";
import { rng } from "./rng.js";

const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "200" },
    workers: { type: "string", default: "3" },
    faults: { type: "string", default: "30" },
    seed: { type: "string", default: "1" },
    json: { type: "string" },
    logs: { type: "string" },
  },
});
const JOBS = Number(args.jobs);
const WORKERS = Number(args.workers);
const FAULTS = Number(args.faults);
const unavailable = netnsUnavailable() ?? pgClusterUnavailable();
if (unavailable) {
  console.error(`fault harness: ${unavailable}`);
  process.exit(2);
}

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
  host: number;
  outcome: "accepted" | "refused" | "unknown";
  id?: string;
  detail?: string;
}
interface Read {
  id: string;
  at: number;
  host: number;
  status: string;
  result?: string; // hash of the completed result
}

// A worker's lease is 10 s and the reapers run every 5 s: a worker cut for 15 s or more has lost its job.
const WORKER_CUT_MS = [15_000, 40_000];
const API_CUT_MS = [10_000, 30_000];
// A client gives up on a request after these (then tries the other host): an API host cut off answers nothing.
const READ_TIMEOUT_MS = 5_000;
const SUBMIT_TIMEOUT_MS = 30_000;
// After a request to a host failed, clients send to the other host for this long (a load balancer's health check).
const HOST_PENALTY_MS = 10_000;

const dataDir = tempDataDir();
const env: NodeJS.ProcessEnv = {
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
const lab = await startFaultLab({ workers: WORKERS, dbName: "sori_faults", env, dataDir });
const cpu = sampleCpu(() => [
  ...lab.all.map((p) => p.child.pid!),
  ...[lab.cluster.serverPid()].filter((p): p is number => p !== null),
]);
const cpu0 = process.cpuUsage();
const submits: Submit[] = [];
const reads: Read[] = [];
const faults: { at_s: number; kind: string; target?: string; how?: LinkCut; for_s?: number; forget?: boolean }[] = [];
const t0 = Date.now();
const since = () => Number(((Date.now() - t0) / 1000).toFixed(1));

// Which API host a client sends to: either, at random, but not one that failed in the last HOST_PENALTY_MS.
const penalised = lab.apiUrls.map(() => 0);
const pickHost = (): number => {
  const ok = lab.apiUrls.map((_, i) => i).filter((i) => penalised[i]! < Date.now());
  return ok.length ? pick(ok) : pick(lab.apiUrls.map((_, i) => i));
};
const penalise = (host: number): void => {
  penalised[host] = Date.now() + HOST_PENALTY_MS;
};

let token = "";
async function authenticate(client: { client_id: string; client_secret: string }): Promise<void> {
  for (;;) {
    const host = pickHost();
    try {
      const r = await fetch(`${lab.apiUrls[host]}/v1/authenticate`, {
        method: "POST",
        body: new URLSearchParams({ client_id: client.client_id, client_secret: client.client_secret }),
        signal: AbortSignal.timeout(READ_TIMEOUT_MS),
      });
      if (r.status === 200) {
        token = ((await r.json()) as { access_token: string }).access_token;
        return;
      }
    } catch {
      penalise(host); // that host is down: try the other
    }
    await sleep(500);
  }
}

async function submitOne(n: number): Promise<void> {
  const { file, config } = pickFile();
  for (;;) {
    const host = pickHost();
    const form = new FormData();
    form.append("config", JSON.stringify(config));
    form.append("file", new Blob([fs.readFileSync(file)]), path.basename(file));
    try {
      const r = await fetch(`${lab.apiUrls[host]}/v1/transcribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: form,
        signal: AbortSignal.timeout(SUBMIT_TIMEOUT_MS),
      });
      const body = (await r.json()) as { id?: string; code?: string };
      if (r.status === 200 && body.id) {
        submits.push({ n, file, host, outcome: "accepted", id: body.id });
        return;
      }
      submits.push({ n, file, host, outcome: "refused", detail: `${r.status} ${body.code}` });
      if (r.status < 500) return; // a refusal is an answer; an E500 (the store unreachable) is tried again
    } catch (err) {
      submits.push({ n, file, host, outcome: "unknown", detail: (err as Error).message });
    }
    penalise(host);
    await sleep(1000);
  }
}

async function readOne(id: string): Promise<string | null> {
  const host = pickHost();
  try {
    const r = await fetch(`${lab.apiUrls[host]}/v1/transcribe/${id}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    });
    if (r.status !== 200) {
      await r.arrayBuffer();
      penalise(host);
      return null; // E500 while the store is unreachable: no answer about the job
    }
    const body = (await r.json()) as { status: string; results?: { utterances?: unknown } };
    const read: Read = { id, at: Date.now(), host, status: body.status };
    if (body.status === "completed") {
      if (!Array.isArray(body.results?.utterances)) read.status = "completed-without-result";
      read.result = createHash("sha256").update(JSON.stringify(body.results)).digest("hex");
    }
    reads.push(read);
    return read.status;
  } catch {
    penalise(host);
    return null; // the host is down or cut off
  }
}

const between = ([lo, hi]: number[]): number => Math.round(lo! + random() * (hi! - lo!));
const restores: Promise<void>[] = [];

/** Cuts a host's link for `ms`, then restores it (in the background: other faults go on meanwhile). */
function cutFor(kind: string, host: string, target: string, ms: number): boolean {
  const how: LinkCut = random() < 0.5 ? "down" : "drop";
  // In a third of the cuts the store's host also forgets the host's connections halfway through (a failover or a
  // restart of its machine): the reset is lost on the cut link, and the host's open queries wait on dead connections.
  const forget = random() < 1 / 3;
  if (!lab.cut(host, how)) return false;
  faults.push({ at_s: since(), kind, target, how, for_s: ms / 1000, ...(forget ? { forget } : {}) });
  restores.push(
    (async () => {
      await sleep(ms / 2);
      if (forget) lab.forget(host);
      await sleep(ms / 2);
      lab.restore(host);
    })(),
  );
  return true;
}

/** Injects one fault of `kind`; false when no target fits (every candidate is cut off just now). */
async function injectFault(kind: string): Promise<boolean> {
  // A host that is cut off is left alone by the other faults: a process restarted there could not reach the store.
  const uncut = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => i).filter((i) => !lab.isCut(`${prefix}${i}`));
  if (kind === "kill-worker" || kind === "term-worker") {
    const candidates = uncut("w", WORKERS).filter((i) => lab.workers[i]);
    if (!candidates.length) return false;
    const i = pick(candidates);
    const w = lab.workers[i]!;
    lab.workers[i] = null;
    faults.push({ at_s: since(), kind, target: `worker ${i}` });
    if (kind === "kill-worker") await lab.kill(w);
    else await lab.stop(w);
    await lab.startWorker(i);
  } else if (kind === "kill-api") {
    const candidates = uncut("api", 2).filter((i) => lab.apis[i]);
    if (!candidates.length) return false;
    const i = pick(candidates);
    const a = lab.apis[i]!;
    lab.apis[i] = null;
    faults.push({ at_s: since(), kind, target: `api ${i}` });
    await lab.kill(a);
    await sleep(500 + random() * 1500);
    await lab.startApi(i);
  } else if (kind === "cut-worker") {
    // A worker in the middle of a job, the longest first, so that the cut costs it the job; never the last one
    // still connected, so that another can take the job over.
    const connected = uncut("w", WORKERS);
    if (connected.length < 2) return false;
    const busy = (await lab.busyWorkers()).filter((i) => connected.includes(i));
    const candidates = busy.length ? busy : connected;
    const i = busy.length ? busy[0]! : pick(candidates);
    return cutFor(kind, `w${i}`, `worker ${i}`, between(WORKER_CUT_MS));
  } else if (kind === "cut-api") {
    // Never both API hosts at once: the point is that the other one carries the clients meanwhile.
    const candidates = uncut("api", 2);
    if (candidates.length < 2) return false;
    const i = pick(candidates);
    return cutFor(kind, `api${i}`, `api ${i}`, between(API_CUT_MS));
  } else {
    faults.push({ at_s: since(), kind });
    lab.cluster.stopServer();
    await sleep(1000 + random() * 3000);
    lab.cluster.startServer();
  }
  return true;
}

/** The long input: three shared clips (131 s, three 60 s windows). */
function buildLong(out: string): void {
  joinClips(out, ["en/earnings22_1_4482311_3_62.wav", "en/earnings22_3_4483589_261_321.wav", "en/whisper_jfk.flac"]);
  LONG = out;
}

let exitCode = 0;
try {
  buildLong(path.join(dataDir, "long-131s.wav"));
  await lab.startApi(0);
  await lab.startApi(1);
  for (let i = 0; i < WORKERS; i++) await lab.startWorker(i);
  const client = createClient({ ...env, SORI_DATA_DIR: dataDir, SORI_DATABASE_URL: lab.adminUrl });
  await authenticate(client);
  console.log(`${JOBS} jobs, ${WORKERS} workers, ${FAULTS} faults; API hosts ${lab.apiUrls.join(", ")}`);

  // Submit in the background, three at a time, spread over the time the faults take (about 8 s each), so that API
  // kills, cuts and store restarts also hit submits; read every accepted job until it is final, as a polling
  // client does.
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
  // Faults while jobs run: one every 4 to 12 s, the kinds at random; a cut link lasts on while the next faults come.
  const kinds = [
    "kill-worker",
    "kill-worker",
    "term-worker",
    "kill-api",
    "restart-postgres",
    "cut-worker",
    "cut-worker",
    "cut-api",
  ];
  for (let f = 0; f < FAULTS; ) {
    await sleep(4000 + random() * 8000);
    if (!(await injectFault(pick(kinds)))) continue;
    f++;
    const last = faults[faults.length - 1]!;
    console.log(
      `fault ${f}/${FAULTS} at ${since()} s: ${last.kind}${last.target ? ` (${last.target}` : ""}${last.how ? `, ${last.how}${last.forget ? " + forgotten" : ""} for ${last.for_s} s` : ""}${last.target ? ")" : ""}; ${final.size} jobs final`,
    );
  }
  await Promise.all(submitters);
  await Promise.all(restores);
  submitting = false;
  const deadline = Date.now() + 30 * 60_000;
  while (submits.some((s) => s.id && !final.has(s.id)) && Date.now() < deadline) await sleep(1000);
  await Promise.race([reader, sleep(5000)]);
  // Read every job once more after the end, for the history.
  for (const s of submits) if (s.id) await readOne(s.id);

  // The store's view: every job, its transcribe task and what the workers logged about it.
  const db = new pg.Client({ connectionString: lab.adminUrl });
  await db.connect();
  const rows = (
    await db.query<{ id: string; state: string; attempts: number; audio_s: number | null; result: string | null }>(
      "SELECT j.id, t.state, t.attempts, j.audio_s, j.result FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe'",
    )
  ).rows;
  const fence = await fenceReport(db, lab.pidOf);
  await db.end();
  const logs = lab.all.flatMap((p) =>
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
  const count = (pred: (l: Record<string, unknown>) => boolean) => logs.filter(pred).length;

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
  const crashed = lab.crashed();
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
    api_hosts: lab.apiUrls.length,
    workers: WORKERS,
    accepted: accepted.size,
    accepted_per_api_host: lab.apiUrls.map(
      (_, i) => submits.filter((x) => x.outcome === "accepted" && x.host === i).length,
    ),
    refused: submits.filter((s) => s.outcome === "refused").length,
    unknown_submits: unknownSubmits,
    jobs_from_unknown_submits: phantom.length,
    faults: faults.length,
    faults_by_kind: Object.fromEntries([...new Set(kinds)].map((k) => [k, faults.filter((f) => f.kind === k).length])),
    cuts_by_how: {
      down: faults.filter((f) => f.how === "down").length,
      drop: faults.filter((f) => f.how === "drop").length,
      with_connections_forgotten: faults.filter((f) => f.forget).length,
    },
    completed: rows.filter((r) => r.state === "completed").length,
    lost: lost.length + phantomUnfinished.length,
    duplicated: duplicated.length,
    history_violations: violations.length,
    processes_crashed: crashed.length,
    reads: reads.length,
    reads_per_api_host: lab.apiUrls.map((_, i) => reads.filter((r) => r.host === i).length),
    fence: {
      checkpoint_writes: fence.checkpoint_writes,
      completions: fence.completions,
      unfenced_writes: fence.unfenced,
      // Writes the fence refused: a worker that had lost its lease tried to store these.
      checkpoints_refused: count((l) => l.msg === "checkpoint" && l.stored === false),
      checkpoints_failed: count((l) => l.msg === "checkpoint not stored"),
      results_discarded: count((l) => String(l.msg).startsWith("lease lost before the outcome was recorded")),
      engines_stopped_on_lost_lease: count((l) => l.msg === "lease lost; stopping the engine"),
    },
    attempts_started_again: attemptsAgain,
    resumed_from_checkpoint: [...resumes.values()].reduce((a, x) => a + x.length, 0),
    audio_s_total: Number(rows.reduce((a, r) => a + (r.audio_s ?? 0), 0).toFixed(1)),
    redone_audio_s_upper_bound: Number(redoneS.toFixed(1)),
    wall_s: since(),
    // The sori processes, their engines and PostgreSQL (sampled each second), and the harness itself.
    cpu_s: Number(cpu.seconds().toFixed(1)),
    harness_cpu_s: Number(((process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1e6).toFixed(1)),
    examples: {
      lost: lost.slice(0, 5),
      duplicated: duplicated.slice(0, 5),
      violations: violations.slice(0, 5),
      unfenced: fence.examples,
      crashed: crashed.slice(0, 5),
    },
  };
  console.log(JSON.stringify(report, null, 2));
  if (args.logs) {
    fs.mkdirSync(args.logs, { recursive: true });
    for (const [name, p] of lab.named())
      fs.writeFileSync(path.join(args.logs, `${name}.log`), `${p.logs.join("\n")}\n`);
  }
  if (args.json) fs.writeFileSync(args.json, JSON.stringify({ ...report, fault_log: faults }, null, 2));
  if (report.lost || report.duplicated || report.history_violations || fence.unfenced || crashed.length) exitCode = 1;
} finally {
  cpu.stop();
  await lab.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
