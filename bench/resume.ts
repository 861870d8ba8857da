// Checkpoints under repeated crashes (issue 25): one long job whose worker is killed (-9, with its engine) at random
// points K times; a fresh worker takes the job each time and continues from the last checkpoint. Prints, per kill,
// where the decoding stood, where the next worker resumed, and the audio decoded twice (the window in flight).
//
//   nice -n 19 npx tsx bench/resume.ts [--minutes 60] [--kills 3] [--block-s 600] [--window-s 300] [--seed 1]
//                                       [--json OUT]
//
// The input is bench/memory.py's (engine/sori_eval/inputs.py long_recording): blocks of --block-s seconds, each the
// 26 Korean clips of ko/ end to end (about 2.3 min of speech and pauses) and silence up to the block's length, as
// 16 kHz mono wav. API and workers are
// separate processes on one SQLite data dir (SORI_LEASE_S 20, SORI_MAX_ATTEMPTS kills + 2: each kill uses an attempt).
// The kill points are random fractions of the audio (seeded), drawn in (0.1, 0.9) and at least 0.15 apart; a kill
// happens when the task's progress (the engine's position in the file, stored with each lease renewal) passes one.
//
// Figures: per kill, `at_s` (the decoding position at the kill, from the task's stored progress: it lags the engine
// by at most one heartbeat), `resumed_at_s` (the last checkpoint's offset, from the next worker's "resuming from
// checkpoint" log line), `redone_s` = at_s - resumed_at_s (audio decoded again: the part of the window in flight
// that was done), the windows stored before the kill and the windows redone (1 when the kill fell inside a window), and
// `engine_cpu_lost_s`: the CPU seconds the killed engine had spent since its last stored checkpoint (the work the
// kill threw away, VAD and partly decoded batches included, which the stored progress does not show).
// Then the job's outcome, attempts, utterances, wall time, and the CPU seconds of every engine process (sampled from
// /proc every 0.5 s, so an engine's last half second before its kill is not counted).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import Sqlite from "better-sqlite3";
import { authenticate, submit, waitFinal } from "../test/helpers/api.js";
import { createClient, ROOT, type SoriProcess, startSori, tempDataDir } from "../test/helpers/server.js";
import { ownCpuS } from "./procCpu.js";
import { rng } from "./rng.js";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "60" },
    kills: { type: "string", default: "3" },
    "block-s": { type: "string", default: "600" },
    "window-s": { type: "string", default: "300" },
    seed: { type: "string", default: "1" },
    json: { type: "string" },
  },
});
const MINUTES = Number(args.minutes);
const KILLS = Number(args.kills);

function killPoints(n: number, seed: number): number[] {
  const next = rng(seed);
  for (;;) {
    const points = Array.from({ length: n }, () => 0.1 + 0.8 * next()).sort((x, y) => x - y);
    if (points.every((p, i) => i === 0 || p - points[i - 1]! >= 0.15)) return points;
  }
}

const enginePid = (worker: SoriProcess): number | null => {
  const out = spawnSync("pgrep", ["-P", String(worker.child.pid), "-f", "sori_engine"], { encoding: "utf8" }).stdout;
  const pid = Number(out.trim().split("\n")[0]);
  return pid > 0 ? pid : null;
};

const dataDir = tempDataDir();
const input = path.join(dataDir, "long.wav");
const env = {
  SORI_DATA_DIR: dataDir,
  SORI_PORT: "0",
  // Long enough that a worker starved of CPU by other work on a shared machine keeps its lease; a dead worker's task
  // is reclaimed within this.
  SORI_LEASE_S: "20",
  // Every kill -9 uses an attempt (counted at claim): the job must have one more than there are kills.
  SORI_MAX_ATTEMPTS: String(KILLS + 2),
  SORI_POLL_MS: "200",
  SORI_ENGINE_WINDOW_S: String(args["window-s"]),
  SORI_MAX_AUDIO_S: String(Math.max(4 * 3600, MINUTES * 60 + 60)),
};
const procs: SoriProcess[] = [];
const engineCpu = new Map<number, number>();
/** The current worker's engine: its CPU seconds when its last checkpoint was logged as stored. */
const current = { worker: null as SoriProcess | null, checkpoints: 0, cpuAtCheckpoint: 0, cpu: 0 };
const storedCheckpoints = (w: SoriProcess): number =>
  w.logs.filter((l) => l.includes('"msg":"checkpoint"') && l.includes('"stored":true')).length;
function sample(): void {
  for (const p of procs) {
    const pid = p.child.exitCode === null && p.child.signalCode === null ? enginePid(p) : null;
    const s = pid === null ? null : ownCpuS(pid);
    if (pid === null || s === null) continue;
    engineCpu.set(pid, s);
    if (p === current.worker) {
      current.cpu = s;
      const n = storedCheckpoints(p);
      if (n > current.checkpoints) [current.checkpoints, current.cpuAtCheckpoint] = [n, s];
    }
  }
}
const sampler = setInterval(sample, 250);
try {
  const built = spawnSync(
    path.join(ROOT, ".venv/bin/python"),
    ["-m", "sori_eval.inputs", "long", input, "--minutes", String(MINUTES), "--block-s", String(args["block-s"])],
    { cwd: path.join(ROOT, "engine"), encoding: "utf8" },
  );
  if (built.status !== 0) throw new Error(`building the input failed: ${built.stderr}`);
  const durationS = Number(built.stdout.trim().split("\n").pop());
  const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: false });

  const api = await startSori("serve", env, ["--no-workers"]);
  procs.push(api);
  const client = createClient(env);
  const token = await authenticate(api.url, client.client_id, client.client_secret);
  let worker = await startSori("worker", env);
  procs.push(worker);
  current.worker = worker;
  const started = Date.now();
  const { body } = await submit(api.url, token, input, { model_name: "whisper", language: "ko" });
  const id = String(body.id);
  console.log(
    `job ${id}: ${durationS} s of audio, window ${args["window-s"]} s, kills at ${killPoints(KILLS, Number(args.seed))
      .map((p) => Math.round(p * durationS))
      .join(", ")} s`,
  );

  const progress = (): number =>
    (
      db.prepare("SELECT progress FROM tasks WHERE job_id = ? AND kind = 'transcribe'").get(id) as {
        progress: number;
      }
    ).progress;
  const taskState = (): string =>
    (db.prepare("SELECT state FROM tasks WHERE job_id = ? AND kind = 'transcribe'").get(id) as { state: string }).state;
  const storedWindows = (): number =>
    (db.prepare("SELECT count(*) AS n FROM task_checkpoints").get() as { n: number }).n;
  const kills: Record<string, number | null>[] = [];
  for (const point of killPoints(KILLS, Number(args.seed))) {
    while (progress() < point) {
      if (taskState() !== "running" && taskState() !== "queued") throw new Error(`the job ended early: ${taskState()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const atS = progress() * durationS;
    const windowsBefore = storedWindows();
    sample();
    // CPU the engine spent since its last stored checkpoint (or since it started): the work this kill throws away.
    const redoneCpuS = current.cpu - current.cpuAtCheckpoint;
    spawnSync("kill", ["-KILL", String(enginePid(worker) ?? 0)]);
    await worker.stop("SIGKILL");
    worker = await startSori("worker", env);
    procs.push(worker);
    Object.assign(current, { worker, checkpoints: 0, cpuAtCheckpoint: 0, cpu: 0 });
    const w = worker;
    // No window stored before the kill: the next worker starts from zero and logs no resume.
    let resumed: { windows: number; offset_s: number } | undefined =
      windowsBefore === 0 ? { windows: 0, offset_s: 0 } : undefined;
    while (!resumed) {
      resumed = w.logs
        .filter((l) => l.includes("resuming from checkpoint"))
        .map((l) => JSON.parse(l) as { windows: number; offset_s: number })[0];
      if (!resumed && Date.now() - started > 3600_000 * 3) throw new Error("no resume");
      if (!resumed) await new Promise((r) => setTimeout(r, 200));
    }
    const row = {
      at_s: Number(atS.toFixed(1)),
      windows_stored: windowsBefore,
      resumed_after_windows: resumed.windows,
      resumed_at_s: Number(resumed.offset_s.toFixed(1)),
      redone_s: Number(Math.max(0, atS - resumed.offset_s).toFixed(1)),
      windows_redone: atS > resumed.offset_s || redoneCpuS > 1 ? 1 : 0,
      engine_cpu_lost_s: Number(redoneCpuS.toFixed(1)),
    };
    kills.push(row);
    console.log(`kill ${kills.length}: ${JSON.stringify(row)}`);
  }
  const final = await waitFinal(api.url, token, id, 3 * 3600_000);
  const wallS = (Date.now() - started) / 1000;
  const attempts = (
    db.prepare("SELECT attempts FROM tasks WHERE job_id = ? AND kind = 'transcribe'").get(id) as { attempts: number }
  ).attempts;
  const report = {
    audio_s: durationS,
    window_s: Number(args["window-s"]),
    status: final.status,
    attempts,
    utterances: final.results?.utterances?.length ?? null,
    wall_s: Number(wallS.toFixed(1)),
    engine_cpu_s: Number([...engineCpu.values()].reduce((a, b) => a + b, 0).toFixed(1)),
    kills,
    redone_s_total: Number(kills.reduce((a, k) => a + Number(k.redone_s), 0).toFixed(1)),
    engine_cpu_lost_s_total: Number(kills.reduce((a, k) => a + Number(k.engine_cpu_lost_s), 0).toFixed(1)),
    max_windows_redone_per_kill: Math.max(0, ...kills.map((k) => Number(k.windows_redone))),
  };
  console.log(JSON.stringify(report, null, 2));
  if (args.json) fs.writeFileSync(args.json, JSON.stringify(report, null, 2));
  db.close();
} finally {
  clearInterval(sampler);
  await Promise.all(procs.map((p) => p.stop("SIGKILL")));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
