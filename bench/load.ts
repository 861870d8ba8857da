// Load test: N short jobs queued on one `sori serve` with W in-process workers, and, while they
// run, a read load at R requests/s (autocannon, bounded to S seconds) on GET /v1/transcribe/{id}.
//
//   nice -n 19 npx tsx bench/load.ts [--jobs 1000] [--workers 4] [--read-rps 200] [--read-s 60]
//                                    [--database-url postgres://... [--split]] [--models-file FILE.json] [--json OUT]
//
// Figures, all from the real processes and the store:
// - lost: accepted job ids (HTTP 200 with an id) that did not end `completed` (missing, failed or still open when
//   the run gave up). Must be 0.
// - duplicates: jobs claimed more than once (attempts > 1) plus jobs whose completion was recorded more than once
//   (a worker's "job completed" log line per completion; completion is fenced, so the result is written once).
// - FIFO violations: jobs whose first claim (`started_at`, set by the claim statement) came more than
//   CLAIM_OVERLAP_MS before the first claim of a job submitted earlier (lower `seq`): claim order against submission
//   order. A worker reads its clock just before its claim statement, so two claims running at the same moment on
//   separate connections can record their (correctly ordered, SKIP LOCKED) claims a few ms the other way round;
//   such inversions are counted apart (fifo_overlapping_claims) with the largest one (fifo_max_skew_ms).
// - read latency p50/p99/max (ms, autocannon, corrected for coordinated omission at the fixed rate), and the
//   responses by status class (any 5xx is a failure; 429 would mean the client's read limit, which is lifted here).
// - server read time p50/p99/max: Fastify's own responseTime of the same reads (from the server's log), so the
//   time the reads spent queued in the client or the kernel on a CPU-starved machine can be told apart.
// - the 1-minute load average at the start and the end: this machine is shared, so latency moves with it.
// The same function runs in test/load/load.test.ts with small numbers.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { openStore } from "../src/storage/db.js";
import { selectJobs } from "../src/storage/jobs.js";
import { authenticate, submit } from "../test/helpers/api.js";
import { createClient, startSori, TESTDATA } from "../test/helpers/server.js";

/** Claims this close together overlapped in time: their recorded order says nothing (see FIFO above). */
const CLAIM_OVERLAP_MS = 50;

export interface LoadOptions {
  jobs: number;
  workers: number;
  readRps: number;
  readS: number;
  /** Short clip every job transcribes; default: the shortest real clip of the shared test data (2.1 s, ko). */
  clip?: string;
  /** PostgreSQL store instead of the embedded SQLite one (the database must exist and be empty). */
  databaseUrl?: string;
  modelsFile?: string;
  /** The scale-out layout: an API process without workers (`sori serve --no-workers`) and one `sori worker`
   * process with the workers, on one host. Needs `databaseUrl`. */
  split?: boolean;
  /** Give up waiting for the jobs after this long. */
  timeoutS?: number;
  submitConcurrency?: number;
  progress?: (line: string) => void;
}

export interface LoadReport {
  jobs: number;
  workers: number;
  accepted: number;
  refused: number;
  completed: number;
  failed: number;
  lost: number;
  duplicate_claims: number;
  duplicate_completions: number;
  duplicates: number;
  fifo_violations: number;
  fifo_overlapping_claims: number;
  /** The largest time by which a violating job's first claim preceded an earlier-submitted job's. */
  fifo_max_skew_ms: number;
  jobs_s: number;
  jobs_per_s: number;
  open_when_reads_ended: number;
  reads: {
    target_rps: number;
    duration_s: number;
    requests: number;
    achieved_rps: number;
    p50_ms: number;
    p99_ms: number;
    max_ms: number;
    "2xx": number;
    non2xx: number;
    "5xx": number;
    errors: number;
    timeouts: number;
    /** The server's own time per read (Fastify's responseTime in its log): without the client's queueing. */
    server_p50_ms: number;
    server_p99_ms: number;
    server_max_ms: number;
  };
  load_avg_1m: { start: number; end: number };
}

export const DEFAULT_CLIP = path.join(TESTDATA, "ko", "deeply_studioapt_sub100101a00063.wav");

export async function runLoad(o: LoadOptions): Promise<LoadReport> {
  const say = o.progress ?? (() => {});
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-load-"));
  const env: NodeJS.ProcessEnv = {
    SORI_DATA_DIR: path.join(dir, "data"),
    SORI_PORT: "0",
    SORI_WORKERS: String(o.workers),
    SORI_POLL_MS: "200",
    SORI_LOG_LEVEL: "info",
    ...(o.databaseUrl ? { SORI_DATABASE_URL: o.databaseUrl } : {}),
    ...(o.modelsFile ? { SORI_MODELS_FILE: path.resolve(o.modelsFile) } : {}),
  };
  const loadStart = os.loadavg()[0]!;
  // One client holds every job: its concurrency bound and quota are lifted, and its read rate is far above the
  // load's, so what the reads measure is the server, not the per-client limiter.
  const creds = createClient(env, [
    "--max-concurrent",
    String(o.jobs + 10),
    "--quota-hours",
    "0",
    "--read-rps",
    "100000",
  ]);
  if (o.split && !o.databaseUrl) throw new Error("--split needs --database-url (SQLite is one process's store)");
  const sori = await startSori("serve", env, o.split ? ["--no-workers"] : []);
  const worker = o.split ? await startSori("worker", env) : null;
  const store = await openStore({ databaseUrl: o.databaseUrl, dataDir: env.SORI_DATA_DIR! });
  try {
    const token = await authenticate(sori.url, creds.client_id, creds.client_secret);
    const clip = new Blob([fs.readFileSync(o.clip ?? DEFAULT_CLIP)]);
    const config = { model_name: "whisper", language: "ko" };
    const started = Date.now();

    // Submit: a few uploads in flight at once; the store's seq is the submission order.
    const ids: string[] = [];
    let refused = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: o.submitConcurrency ?? 4 }, async () => {
        while (next < o.jobs) {
          next++;
          const r = await submit(sori.url, token, clip, config);
          if (r.status === 200 && typeof r.body.id === "string") ids.push(r.body.id);
          else refused++;
        }
      }),
    );
    say(`submitted ${ids.length} jobs (${refused} refused) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // Reads while the jobs run: a fixed rate over a sample of the job ids, bounded in time.
    const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 50)) === 0);
    const readsFrom = Date.now();
    const reads = await autocannon({
      // In a worker thread of its own: this thread also reads the server's log lines, which would otherwise
      // delay the load generator's own timings.
      workers: 1,
      url: sori.url,
      connections: 10,
      overallRate: o.readRps,
      duration: o.readS,
      headers: { authorization: `Bearer ${token}` },
      requests: sample.map((id) => ({ method: "GET" as const, path: `/v1/transcribe/${id}` })),
    });
    const readsTo = Date.now();
    const openAfterReads = await openJobs(store);
    const server = serverReadTimes(sori.logs, readsFrom, readsTo);
    say(
      `reads done: ${reads.requests.total} requests, p50 ${reads.latency.p50} ms, p99 ${reads.latency.p99} ms (server p99 ${percentile(server, 0.99)} ms); ${openAfterReads} jobs still open`,
    );

    // Wait for every job to be final.
    const deadline = Date.now() + (o.timeoutS ?? 3600) * 1000;
    let lastSay = 0;
    for (;;) {
      const open = await openJobs(store);
      if (open === 0 || Date.now() > deadline) break;
      if (Date.now() - lastSay > 30_000) {
        lastSay = Date.now();
        say(`${open} jobs open after ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const jobsS = (Date.now() - started) / 1000;

    const rows = await selectJobs(store.db).where("j.client_id", "=", creds.client_id).orderBy("j.seq").execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const lost = ids.filter((id) => byId.get(id)?.state !== "completed").length;
    const completions = new Map<string, number>();
    for (const line of [...sori.logs, ...(worker?.logs ?? [])]) {
      if (!line.includes('"job completed"')) continue;
      const id = (JSON.parse(line) as { job_id?: string }).job_id;
      if (id) completions.set(id, (completions.get(id) ?? 0) + 1);
    }
    const duplicateClaims = rows.filter((r) => r.attempts > 1).length;
    const duplicateCompletions = [...completions.values()].filter((n) => n > 1).length;
    const duplicates = new Set([
      ...rows.filter((r) => r.attempts > 1).map((r) => r.id),
      ...[...completions].filter(([, n]) => n > 1).map(([id]) => id),
    ]).size;
    let fifo = 0;
    let overlapping = 0;
    let fifoSkewMs = 0;
    let latestEarlierClaim = -Infinity;
    for (const r of rows) {
      if (r.started_at === null) continue;
      if (r.started_at < latestEarlierClaim) {
        if (latestEarlierClaim - r.started_at > CLAIM_OVERLAP_MS) fifo++;
        else overlapping++;
        fifoSkewMs = Math.max(fifoSkewMs, latestEarlierClaim - r.started_at);
      }
      latestEarlierClaim = Math.max(latestEarlierClaim, r.started_at);
    }
    const by = (lo: number) => reads[`${lo / 100}xx` as "2xx" | "4xx" | "5xx"] ?? 0;
    return {
      jobs: o.jobs,
      workers: o.workers,
      accepted: ids.length,
      refused,
      completed: rows.filter((r) => r.state === "completed").length,
      failed: rows.filter((r) => r.state === "failed").length,
      lost,
      duplicate_claims: duplicateClaims,
      duplicate_completions: duplicateCompletions,
      duplicates,
      fifo_violations: fifo,
      fifo_overlapping_claims: overlapping,
      fifo_max_skew_ms: fifoSkewMs,
      jobs_s: round(jobsS),
      jobs_per_s: round(ids.length / jobsS),
      open_when_reads_ended: openAfterReads,
      reads: {
        target_rps: o.readRps,
        duration_s: o.readS,
        requests: reads.requests.total,
        achieved_rps: round(reads.requests.total / o.readS),
        p50_ms: reads.latency.p50,
        p99_ms: reads.latency.p99,
        max_ms: reads.latency.max,
        "2xx": by(200),
        non2xx: reads.non2xx,
        "5xx": by(500),
        errors: reads.errors,
        timeouts: reads.timeouts,
        server_p50_ms: percentile(server, 0.5),
        server_p99_ms: percentile(server, 0.99),
        server_max_ms: percentile(server, 1),
      },
      load_avg_1m: { start: round(loadStart), end: round(os.loadavg()[0]!) },
    };
  } finally {
    await store.close();
    await worker?.stop();
    await sori.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function openJobs(store: Awaited<ReturnType<typeof openStore>>): Promise<number> {
  const r = await store.db
    .selectFrom("tasks")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("kind", "=", "transcribe")
    .where("state", "in", ["queued", "running"])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const round = (n: number): number => Math.round(n * 100) / 100;

/** Fastify's responseTime of each GET /v1/transcribe/{id} that completed inside the read window. */
function serverReadTimes(logs: readonly string[], from: number, to: number): number[] {
  const reads = new Set<string>();
  const times: number[] = [];
  for (const line of logs) {
    if (!line.startsWith("{")) continue;
    const l = JSON.parse(line) as {
      time: number;
      reqId?: string;
      msg?: string;
      req?: { method: string; url: string };
      responseTime?: number;
    };
    if (!l.reqId) continue;
    if (l.msg === "incoming request" && l.req?.method === "GET" && l.req.url.startsWith("/v1/transcribe/"))
      reads.add(l.reqId);
    else if (
      l.msg === "request completed" &&
      reads.has(l.reqId) &&
      l.time >= from &&
      l.time <= to &&
      l.responseTime !== undefined
    ) {
      times.push(l.responseTime);
    }
  }
  return times;
}

function percentile(values: number[], q: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const report = await runLoad({
    jobs: Number(arg("jobs") ?? 1000),
    workers: Number(arg("workers") ?? 4),
    readRps: Number(arg("read-rps") ?? 200),
    readS: Number(arg("read-s") ?? 60),
    databaseUrl: arg("database-url"),
    modelsFile: arg("models-file"),
    split: process.argv.includes("--split"),
    clip: arg("clip"),
    progress: (l) => process.stderr.write(`[load] ${l}\n`),
  });
  const json = JSON.stringify(report, null, 2);
  process.stdout.write(json + "\n");
  const out = arg("json");
  if (out) fs.writeFileSync(out, json + "\n");
  const ok = report.lost === 0 && report.duplicates === 0 && report.fifo_violations === 0 && report.reads["5xx"] === 0;
  process.exitCode = ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
