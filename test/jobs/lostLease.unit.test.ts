// A lost lease ends only its own task's engine requests. Workers share engines (src/main.ts), so a worker whose lease
// is gone aborts the signal it gave its task's requests, and never stops the engine: the next task, its own or
// another worker's, runs on the same engine untouched. An engine double stands in for the real one, so the timing is
// exact: a request ends when its signal is aborted, as the real client's does (test/jobs/worker.test.ts runs the
// real engine).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadConfig } from "../../src/config.js";
import type { Engine } from "../../src/engine/client.js";
import { loadModelRegistry } from "../../src/engine/models.js";
import { EngineError, type TranscribeResult } from "../../src/engine/protocol.js";
import { Worker } from "../../src/jobs/worker.js";
import { localBlobStore } from "../../src/storage/blobs/local.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob, insertJob } from "../../src/storage/jobs.js";
import { insertTestClient } from "../helpers/clients.js";
import { captureLog } from "../helpers/logCapture.js";
import { TESTDATA, tempDataDir } from "../helpers/server.js";

const CLIP = path.join(TESTDATA, "ko", "deeply_studioapt_sub100101a00063.wav");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An engine whose requests take a while and end at once, with `cancelled`, when their signal is aborted. */
class EngineDouble {
  calls = 0;
  stops = 0;
  signals: AbortSignal[] = [];
  /** Runs inside the n-th transcribe request (1-based), before it answers. */
  during: Record<number, () => Promise<void>> = {};

  async transcribe(_params: unknown, opts: { signal?: AbortSignal } = {}): Promise<TranscribeResult> {
    const n = ++this.calls;
    const signal = opts.signal;
    assert.ok(signal, "every transcribe request carries its task's signal");
    this.signals.push(signal);
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener("abort", () => reject(new EngineError("cancelled", "transcribe cancelled")), {
        once: true,
      }),
    );
    aborted.catch(() => {});
    await Promise.race([(this.during[n] ?? (() => sleep(300)))(), aborted]);
    if (signal.aborted) throw new EngineError("cancelled", "transcribe cancelled");
    return { duration_s: 2.1, language: "ko", language_probs: { ko: 1 }, segments: [] };
  }

  async stop(): Promise<void> {
    this.stops++;
  }

  get pid(): number | undefined {
    return undefined;
  }
}

describe("a lease lost mid-task", { timeout: 60_000 }, () => {
  const dir = tempDataDir();
  const dataDir = path.join(dir, "data");
  const config = loadConfig({ SORI_DATA_DIR: dataDir, SORI_LEASE_S: "1", SORI_POLL_MS: "50" });
  const { log, logs } = captureLog();
  let store: Store;
  let worker: Worker | null = null;

  before(async () => {
    store = await openStore({ dataDir });
    await insertTestClient(store, "c");
  });
  after(async () => {
    await worker?.stop(0);
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("aborts that task's requests alone: the engine is not stopped and the next job completes at its first attempt", async () => {
    const blobs = localBlobStore(dataDir);
    const submit = async (id: string): Promise<void> => {
      const { key } = await blobs.put(fs.createReadStream(CLIP));
      await insertJob(store, {
        id,
        client_id: "c",
        config: JSON.stringify({ model_name: "sommers", language: "ko" }),
        blob_key: key,
        file_format: "wav",
        audio_s: 2.1,
        max_attempts: 3,
      });
    };
    await submit("first");
    await submit("second");
    const engine = new EngineDouble();
    // The first request: another worker takes the task over (as after a reap); the request would run for a minute
    // if its signal were not aborted.
    let stolenAt = 0;
    engine.during[1] = async () => {
      await store.db
        .updateTable("tasks")
        .set({ locked_by: "other", lease_until: Date.now() + 600_000 })
        .where("job_id", "=", "first")
        .execute();
      stolenAt = Date.now();
      await new Promise((r) => setTimeout(r, 60_000).unref());
    };
    worker = new Worker("w1", {
      store,
      blobs,
      engine: engine as unknown as Engine,
      models: loadModelRegistry(config.modelsDir, config.modelsFile),
      config,
      log,
    });
    worker.start();
    for (let i = 0; i < 200 && (await getJob(store, "second"))?.state !== "completed"; i++) await sleep(50);

    assert.ok(logs.some((l) => l.job_id === "first" && l.msg === "lease lost; cancelling the task's engine requests"));
    assert.ok(
      logs.some((l) => l.job_id === "first" && String(l.msg).startsWith("lease lost before")),
      "the first job's attempt ended and its outcome was fenced off",
    );
    const endedS = (Number(logs.find((l) => String(l.msg).startsWith("lease lost before"))!.time) - stolenAt) / 1000;
    assert.ok(endedS < 3, `the attempt ended ${endedS} s after its lease was lost (lease 1 s)`);
    assert.deepEqual(
      engine.signals.map((s) => s.aborted),
      [true, false],
      "only the first task's signal was aborted",
    );
    assert.equal(engine.stops, 0, "the worker never stops the engine it shares");
    const second = await getJob(store, "second");
    assert.equal(second?.state, "completed");
    const task = await store.db
      .selectFrom("tasks")
      .select("attempts")
      .where("job_id", "=", "second")
      .executeTakeFirstOrThrow();
    assert.equal(task.attempts, 1);
    assert.ok(!logs.some((l) => l.job_id === "second" && String(l.msg).includes("attempt failed")));
  });
});
