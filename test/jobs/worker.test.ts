// The worker on the one task lifecycle, in-process with the real engine and model: two workers share one engine (as
// src/main.ts wires them); a worker whose lease is lost ends its own task's requests at once instead of decoding to
// the end, while the other worker's job on the same engine completes; and a completed job whose audio cannot be
// deleted stays completed (the clean-up failure is logged, never recorded as a failed attempt).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadConfig } from "../../src/config.js";
import { Engine } from "../../src/engine/client.js";
import { loadModelRegistry } from "../../src/engine/models.js";
import { Worker } from "../../src/jobs/worker.js";
import { registry } from "../../src/metrics/index.js";
import type { BlobStore } from "../../src/storage/blobs/index.js";
import { localBlobStore } from "../../src/storage/blobs/local.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob, insertJob } from "../../src/storage/jobs.js";
import { insertTestClient } from "../helpers/clients.js";
import { captureLog } from "../helpers/logCapture.js";
import { ROOT, TESTDATA, tempDataDir } from "../helpers/server.js";

// 2.1 s of Korean speech, and the same clip repeated to about two minutes: a decode that takes far longer than the
// test waits for a lost lease to be noticed.
const CLIP = path.join(TESTDATA, "ko", "deeply_studioapt_sub100101a00063.wav");
// 30 s of English: seconds of decoding, in flight on the shared engine while the other job's lease is lost.
const HALF_MINUTE = path.join(TESTDATA, "multi", "pyannote_sample.wav");
const REPEAT = `
import sys, wave, numpy as np
sys.path.insert(0, sys.argv[3])
from sori_engine.audio import decode
x = decode(sys.argv[1])
audio = np.concatenate([x, np.zeros(8000, dtype=np.float32)] * 50)
with wave.open(sys.argv[2], "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes((np.clip(audio, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes())
`;

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("worker on the task lifecycle (real engine)", { timeout: 300_000 }, () => {
  const dir = tempDataDir();
  const dataDir = path.join(dir, "data");
  const config = loadConfig({ SORI_DATA_DIR: dataDir, SORI_LEASE_S: "1", SORI_POLL_MS: "50" });
  const { log, logs } = captureLog();
  let store: Store;
  let blobs: BlobStore;
  let engine: Engine;
  let workers: Worker[] = [];
  let n = 0;

  const startWorker = (b: BlobStore): Worker => {
    const w = new Worker(`w${++n}`, {
      store,
      blobs: b,
      engine,
      models: loadModelRegistry(config.modelsDir, config.modelsFile),
      config,
      log,
    });
    w.start();
    workers.push(w);
    return w;
  };
  const stopWorkers = async (): Promise<void> => {
    await Promise.all(workers.map((w) => w.stop(0)));
    workers = [];
  };
  const submit = async (
    file: string,
    jobConfig: object = { model_name: "sommers", language: "ko" },
  ): Promise<string> => {
    const { key } = await blobs.put(fs.createReadStream(file));
    const id = `job${++n}`;
    await insertJob(store, {
      id,
      client_id: "c",
      config: JSON.stringify(jobConfig),
      blob_key: key,
      file_format: "wav",
      audio_s: null,
      max_attempts: 3,
    });
    return id;
  };

  before(async () => {
    store = await openStore({ dataDir });
    blobs = localBlobStore(dataDir);
    engine = new Engine({ python: config.python, env: { SORI_ENGINE_JOBS: "2" } });
    await insertTestClient(store, "c");
  });
  after(async () => {
    await stopWorkers();
    await engine.stop(0);
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a lost lease cancels that task alone: its attempt ends at once, the other job on the shared engine completes", async () => {
    const long = path.join(dir, "long.wav");
    const r = spawnSync(
      path.join(ROOT, ".venv", "bin", "python"),
      ["-c", REPEAT, CLIP, long, path.join(ROOT, "engine")],
      { encoding: "utf8" },
    );
    assert.equal(r.status, 0, r.stderr);
    const id = await submit(long);
    startWorker(blobs);
    // Decoding has begun once the engine process exists and the task is running.
    await until(
      "the engine to start decoding",
      async () => (engine.pid && (await getJob(store, id))?.state === "running" ? true : undefined),
      60_000,
    );
    const pid = engine.pid!;
    // A second worker on the same engine takes the next job.
    const other = await submit(HALF_MINUTE, { model_name: "whisper", language: "en" });
    startWorker(blobs);
    await until(
      "the other job running",
      async () => ((await getJob(store, other))?.state === "running" ? true : undefined),
      10_000,
    );
    await until("both requests in the engine", () => (engine.inFlight >= 2 ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 1000)); // well into decoding
    // Another worker took the long task over (as after a reap): the lease is no longer ours.
    await store.db
      .updateTable("tasks")
      .set({ locked_by: "thief", lease_until: Date.now() + 600_000 })
      .where("job_id", "=", id)
      .execute();
    const stolenAt = Date.now();
    await until(
      "the lost attempt to end",
      () => (logs.some((l) => l.job_id === id && String(l.msg).startsWith("lease lost before")) ? true : undefined),
      20_000,
    );
    const endedS = (Date.now() - stolenAt) / 1000;
    assert.ok(endedS < 10, `the attempt went on for ${endedS} s after its lease was lost`);
    assert.ok(logs.some((l) => l.job_id === id && l.msg === "lease lost; cancelling the task's engine requests"));
    assert.notEqual(
      (await getJob(store, other))?.state,
      "completed",
      "the other job was still in the engine meanwhile",
    );
    const task = await store.db.selectFrom("tasks").selectAll().where("job_id", "=", id).executeTakeFirstOrThrow();
    assert.deepEqual(
      [task.state, task.locked_by, task.error_code],
      ["running", "thief", null],
      "fenced: the thief's row is untouched",
    );
    assert.equal((await getJob(store, id))?.result, null);

    const done = await until(
      "the other job to be final",
      async () => {
        const j = await getJob(store, other);
        return j?.state === "completed" || j?.state === "failed" ? j : undefined;
      },
      120_000,
    );
    assert.equal(done.state, "completed");
    assert.ok(JSON.parse(done.result!).utterances.length > 0);
    const otherTask = await store.db
      .selectFrom("tasks")
      .select("attempts")
      .where("job_id", "=", other)
      .executeTakeFirstOrThrow();
    assert.equal(otherTask.attempts, 1, "the lost lease cost the other job nothing");
    assert.equal(engine.pid, pid, "the shared engine was neither stopped nor restarted");
    process.kill(pid, 0);
    await stopWorkers();
  });

  it("a completed job whose audio cannot be deleted stays completed and counts as completed", async () => {
    const failing: BlobStore = { ...blobs, remove: async () => Promise.reject(new Error("disk gone")) };
    const id = await submit(CLIP);
    const failedBefore = await attempts("failed");
    startWorker(failing);
    const job = await until(
      "the job to be final",
      async () => {
        const j = await getJob(store, id);
        return j &&
          (j.state === "completed" || j.state === "failed") &&
          logs.some((l) => l.job_id === id && String(l.msg).startsWith("audio removal failed"))
          ? j
          : undefined;
      },
      120_000,
    );
    assert.equal(job.state, "completed");
    assert.ok(JSON.parse(job.result!).utterances.length > 0);
    assert.equal(await attempts("failed"), failedBefore, "no failed attempt recorded");
    assert.ok(!logs.some((l) => l.job_id === id && String(l.msg).includes("attempt failed")));
  });
});

/** The count of transcribe attempts with this outcome in the process's metrics. */
async function attempts(outcome: string): Promise<number> {
  const m = (await registry.getSingleMetric("sori_job_duration_seconds")!.get()).values;
  return m
    .filter(
      (v) =>
        v.labels.outcome === outcome &&
        v.labels.kind === "transcribe" &&
        String((v as { metricName?: string }).metricName).endsWith("_count"),
    )
    .reduce((a, v) => a + v.value, 0);
}
