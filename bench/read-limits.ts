// What the shared read limiter costs (issue 25, part 3): read latency on an API host of a scale-out deployment with
// the token buckets in the process's memory (SORI_RATE_LIMITS=local) and in PostgreSQL (shared, the scale-out
// default), at a fixed read rate (autocannon, corrected for coordinated omission).
//
//   nice -n 19 npx tsx bench/read-limits.ts [--rps 200] [--seconds 20] [--rounds 2] [--json OUT]
//
// Two `sori serve --no-workers` processes on one fresh PostgreSQL database (the machine's, SORI_TEST_PG_URL), one
// per mode, read in turn (local, shared, local, shared...) so that the machine's load falls on both alike. The
// client's read rate is lifted above the load, so every read is a 200 and the figure is the limiter's cost alone.
// Per round and mode: p50/p99/max of the reads (ms), the requests served, non-2xx answers, and the CPU seconds the
// API process spent (from /proc, utime + stime) beside the wall time. The load average is printed with each round.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { authenticate, submit } from "../test/helpers/api.js";
import { createPgDatabase } from "../test/helpers/pgDatabase.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../test/helpers/server.js";

const { values: args } = parseArgs({
  options: {
    rps: { type: "string", default: "200" },
    seconds: { type: "string", default: "20" },
    rounds: { type: "string", default: "2" },
    json: { type: "string" },
  },
});
const RPS = Number(args.rps);
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const MODES = ["local", "shared"] as const;

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

const db = await createPgDatabase("sori_readlimits");
const dirs: string[] = [];
const hosts = new Map<(typeof MODES)[number], SoriProcess>();
try {
  for (const mode of MODES) {
    const dir = tempDataDir();
    dirs.push(dir);
    if (dirs.length > 1) fs.copyFileSync(path.join(dirs[0]!, "jwt.key"), path.join(dir, "jwt.key"));
    hosts.set(
      mode,
      await startSori(
        "serve",
        {
          SORI_DATABASE_URL: db.url,
          SORI_PORT: "0",
          SORI_DATA_DIR: dir,
          SORI_RATE_LIMITS: mode,
          SORI_BLOB_STORE: "postgres",
        },
        ["--no-workers"],
      ),
    );
  }
  const client = createClient({ SORI_DATABASE_URL: db.url, SORI_DATA_DIR: dirs[0] }, ["--read-rps", String(RPS * 100)]);
  const local = hosts.get("local")!;
  const token = await authenticate(local.url, client.client_id, client.client_secret);
  const job = await submit(local.url, token, path.join(TESTDATA, "en/whisper_jfk.flac"), {
    model_name: "whisper",
    language: "en",
  });
  const id = String(job.body.id);
  const rows: Record<string, unknown>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of MODES) {
      const host = hosts.get(mode)!;
      const cpu0 = cpuSeconds(host.child.pid!);
      const load0 = os.loadavg()[0]!;
      const r = await autocannon({
        workers: 1,
        url: `${host.url}/v1/transcribe/${id}`,
        connections: 10,
        overallRate: RPS,
        duration: SECONDS,
        headers: { authorization: `Bearer ${token}` },
      });
      const row = {
        round,
        mode,
        requests: r.requests.total,
        non_2xx: r.non2xx,
        errors: r.errors,
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        max_ms: r.latency.max,
        wall_s: SECONDS,
        api_cpu_s: Number((cpuSeconds(host.child.pid!) - cpu0).toFixed(2)),
        load1: [Number(load0.toFixed(2)), Number(os.loadavg()[0]!.toFixed(2))],
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  for (const mode of MODES) {
    const mine = rows.filter((r) => r.mode === mode);
    const p99 = mine.map((r) => Number(r.p99_ms));
    console.log(
      `${mode}: p99 ${p99.join(" / ")} ms over ${mine.length} rounds of ${SECONDS} s at ${RPS}/s; p50 ${mine.map((r) => r.p50_ms).join(" / ")} ms; API CPU ${mine.map((r) => r.api_cpu_s).join(" / ")} s`,
    );
  }
  if (args.json) fs.writeFileSync(args.json, JSON.stringify({ rps: RPS, seconds: SECONDS, rows }, null, 2));
} finally {
  await Promise.all([...hosts.values()].map((h) => h.stop("SIGKILL")));
  await db.drop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
