// A lost lease noticed late must not cost the next job an attempt. When a worker learns that its lease is gone only
// after its engine has finished (a link cut while the task ended: the renewal's answer comes back with the link), it
// stops the engine; the next task must not be handed to the engine being stopped. An engine double stands in for
// the real one, so the timing is exact: its stop takes a while, and a request that is running when the stop lands
// fails as a killed engine's would.
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

/** An engine whose process is replaced (its generation moves on) when a stop lands, STOP_MS after it was asked. */
class EngineDouble {
  static readonly STOP_MS = 300;
  generation = 0;
  calls = 0;
  /** Runs inside the n-th transcribe request (1-based), before it answers. */
  during: Record<number, () => Promise<void>> = {};

  async transcribe(): Promise<TranscribeResult> {
    const n = ++this.calls;
    const generation = this.generation;
    await (this.during[n] ?? (() => sleep(500)))();
    if (this.generation !== generation) throw new EngineError("engine_crashed", "engine exited (SIGKILL)");
    return { duration_s: 2.1, language: "ko", language_probs: { ko: 1 }, segments: [] };
  }

  async stop(): Promise<void> {
    await sleep(EngineDouble.STOP_MS);
    this.generation++;
  }

  get pid(): number | undefined {
    return undefined;
  }
}

describe("a lease lost while the engine finished", { timeout: 60_000 }, () => {
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

  it("the next job runs on a fresh engine and completes at its first attempt", async () => {
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
    // The first request: another worker takes the task over (as after a reap), and the engine answers just after
    // this worker has noticed (and begun to stop the engine).
    engine.during[1] = async () => {
      await store.db
        .updateTable("tasks")
        .set({ locked_by: "other", lease_until: Date.now() + 600_000 })
        .where("job_id", "=", "first")
        .execute();
      for (let i = 0; i < 100 && !logs.some((l) => l.msg === "lease lost; stopping the engine"); i++) await sleep(20);
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

    assert.ok(
      logs.some((l) => l.job_id === "first" && String(l.msg).startsWith("lease lost before")),
      "the first job's result was discarded",
    );
    const second = await getJob(store, "second");
    assert.equal(second?.state, "completed");
    const task = await store.db
      .selectFrom("tasks")
      .select("attempts")
      .where("job_id", "=", "second")
      .executeTakeFirstOrThrow();
    assert.equal(task.attempts, 1, "the engine's stop did not land on the second job's request");
    assert.ok(!logs.some((l) => l.job_id === "second" && String(l.msg).includes("attempt failed")));
  });
});
