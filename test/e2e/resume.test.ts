// Checkpoints and drain (docs/architecture.md, "Checkpoints"): a job interrupted after its first window continues
// from its last checkpoint instead of from zero. API and workers are separate processes sharing an SQLite data dir;
// the engine's window is 60 s (SORI_ENGINE_WINDOW_S), so a 131 s file (three English clips end to end) makes three
// windows. Worker A is killed (-9, with its engine) after its first checkpoint; worker B resumes after window 0 and
// is stopped with SIGTERM (drain, grace 0) after its own first checkpoint; worker C resumes after window 1 and
// completes. Each resume redoes at most the window that was in flight.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { joinClips } from "../helpers/joinClips.js";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";

const CLIPS = ["en/earnings22_1_4482311_3_62.wav", "en/earnings22_3_4483589_261_321.wav", "en/whisper_jfk.flac"];
const CONFIG = { model_name: "whisper", language: "en" };

interface LogLine {
  msg?: string;
  window?: number;
  windows?: number;
  offset_s?: number;
  stored?: boolean;
}
const lines = (p: SoriProcess, msg: string): LogLine[] =>
  p.logs
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => l.msg === msg);

describe("resume from checkpoints after kill -9 and after a SIGTERM hand-back", () => {
  const dataDir = tempDataDir();
  const input = path.join(dataDir, "three_clips.wav");
  const env = {
    SORI_DATA_DIR: dataDir,
    SORI_PORT: "0",
    SORI_LEASE_S: "8",
    SORI_POLL_MS: "200",
    SORI_ENGINE_WINDOW_S: "60",
    SORI_SHUTDOWN_GRACE_S: "0",
    // One decoder: the windows finish one after another, seconds apart, so a worker can be stopped between two.
    SORI_ENGINE_DECODERS: "1",
  };
  const procs: SoriProcess[] = [];
  const start = async (command: "serve" | "worker", args: string[] = []): Promise<SoriProcess> => {
    const p = await startSori(command, env, args);
    procs.push(p);
    return p;
  };
  const until = async (what: string, check: () => boolean, timeoutMs = 300_000): Promise<void> => {
    const end = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const storedWindows = (p: SoriProcess): number[] =>
    lines(p, "checkpoint")
      .filter((l) => l.stored)
      .map((l) => l.window!);

  before(() => joinClips(input, CLIPS));
  after(async () => {
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("continues after the last checkpoint and gives a whole transcript", async () => {
    const api = await start("serve", ["--no-workers"]);
    const client = createClient(env);
    const token = await authenticate(api.url, client.client_id, client.client_secret);
    const a = await start("worker");
    const { status, body } = await submit(api.url, token, input, CONFIG);
    assert.equal(status, 200, JSON.stringify(body));
    const id = String(body.id);

    // A crash after the first window: the worker and its engine die at once, nothing is handed back.
    await until("worker A's first checkpoint", () => storedWindows(a).length >= 1);
    spawnSync("pkill", ["-KILL", "-P", String(a.child.pid)]);
    await a.stop("SIGKILL");
    assert.deepEqual(storedWindows(a), [0]);

    // The lease expires, B claims the task and starts after window 0; a rolling restart then stops B.
    const b = await start("worker");
    await until("worker B's first checkpoint", () => storedWindows(b).length >= 1);
    await b.stop("SIGTERM");
    const [resumedB] = lines(b, "resuming from checkpoint");
    assert.equal(resumedB?.windows, 1, "B continues after A's one window");
    assert.ok(resumedB.offset_s! >= 55 && resumedB.offset_s! <= 75, `offset ${resumedB.offset_s}`);
    assert.equal(storedWindows(b)[0], 1, "B does not decode window 0 again");
    assert.ok(
      b.logs.some((l) => l.includes("in-flight task handed back")),
      "SIGTERM hands the task back (drain)",
    );

    // C takes the handed-back task at once (no lease to wait for) and finishes it from window 2 on.
    const c = await start("worker");
    const final = await waitFinal(api.url, token, id, 300_000);
    assert.equal(final.status, "completed", JSON.stringify(final));
    const [resumedC] = lines(c, "resuming from checkpoint");
    assert.ok(resumedC && resumedC.windows! >= 2, `C continues after B's windows: ${JSON.stringify(resumedC)}`);
    assert.ok(
      storedWindows(c).every((w) => w >= resumedC.windows!),
      "C redoes no stored window",
    );

    // The transcript covers the whole file, in order, inside its length (131 s).
    const utts = final.results.utterances as { start_at: number; duration: number; msg: string }[];
    assert.ok(utts.length >= 5, `${utts.length} utterances`);
    for (let i = 1; i < utts.length; i++) assert.ok(utts[i]!.start_at >= utts[i - 1]!.start_at);
    assert.ok(utts.some((u) => u.start_at < 50_000) && utts.some((u) => u.start_at > 120_000));
    const last = utts[utts.length - 1]!;
    assert.ok(last.start_at + last.duration <= 132_000, `ends at ${last.start_at + last.duration} ms`);

    // The finished task's checkpoints are gone; the attempts are A's and C's (B's was given back).
    const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
    try {
      const left = db.prepare("SELECT count(*) AS n FROM task_checkpoints").get() as { n: number };
      assert.equal(left.n, 0);
      const task = db.prepare("SELECT attempts FROM tasks WHERE job_id = ? AND kind = 'transcribe'").get(id) as {
        attempts: number;
      };
      assert.equal(task.attempts, 2);
    } finally {
      db.close();
    }
  });
});
