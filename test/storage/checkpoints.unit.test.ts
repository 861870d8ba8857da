// Task checkpoints in the store (migration 007, src/storage/checkpoints.ts) on both backends: written only by the
// worker that holds the task, kept when the task is handed back or retried, dropped when it ends.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { TaskFailure } from "../../src/jobs/failure.js";
import { loadCheckpoints, saveCheckpoint } from "../../src/storage/checkpoints.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { insertJob } from "../../src/storage/jobs.js";
import { claimTasks, completeTask, failTask, type Lease, releaseTask } from "../../src/storage/tasks.js";
import { insertTestClient } from "../helpers/clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const pgSkip = (await pgUnavailable()) ?? false;
const A: Lease = { workerId: "worker-a", leaseMs: 60_000 };
const B: Lease = { workerId: "worker-b", leaseMs: 60_000 };
const crash: TaskFailure = { code: "E500", message: "engine exited", retryable: true };
const final: TaskFailure = { code: "E500", message: "bad", retryable: false };

for (const [label, skip] of [
  ["SQLite", false],
  ["PostgreSQL", pgSkip],
] as const) {
  describe(`task checkpoints on ${label}`, { skip }, () => {
    let store: Store;
    let pg: PgDatabase | undefined;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-ckpt-"));
    let n = 0;

    before(async () => {
      pg = label === "PostgreSQL" ? await createPgDatabase("sori_ckpt") : undefined;
      store = await openStore({ databaseUrl: pg?.url, dataDir: path.join(dir, "data") });
      await insertTestClient(store, "c");
    });
    after(async () => {
      await store?.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const claimNew = async (lease = A) => {
      const id = `job-${++n}`;
      await insertJob(store, {
        id,
        client_id: "c",
        config: "{}",
        blob_key: "k".repeat(22),
        file_format: "wav",
        audio_s: 10,
        max_attempts: 3,
      });
      const [task] = await claimTasks(store, lease);
      assert.equal(task?.job_id, id);
      return task!;
    };
    const row = (idx: number, part = 0) => ({
      part,
      idx,
      offset_s: 300 * (idx + 1),
      data: JSON.stringify({ index: idx }),
    });
    const stored = async (seq: number, part = 0) => (await loadCheckpoints(store, seq, part)).map((r) => r.idx);

    it("only the lease holder writes; an index is written once; parts are apart", async () => {
      const task = await claimNew();
      assert.equal(await saveCheckpoint(store, { seq: task.seq, workerId: A.workerId }, row(0)), true);
      assert.equal(await saveCheckpoint(store, { seq: task.seq, workerId: B.workerId }, row(1)), false);
      assert.equal(await saveCheckpoint(store, { seq: task.seq, workerId: A.workerId }, row(0)), false);
      assert.equal(await saveCheckpoint(store, { seq: task.seq, workerId: A.workerId }, row(1)), true);
      assert.equal(await saveCheckpoint(store, { seq: task.seq, workerId: A.workerId }, row(0, 1)), true);
      assert.deepEqual(await stored(task.seq), [0, 1]);
      assert.deepEqual(await stored(task.seq, 1), [0]);
      assert.equal((await loadCheckpoints(store, task.seq, 0))[1]?.offset_s, 600);
    });

    it("a hand-back and a retry keep them; completion and a final failure drop them", async () => {
      const t1 = await claimNew();
      await saveCheckpoint(store, { seq: t1.seq, workerId: A.workerId }, row(0));
      await releaseTask(store, t1, A.workerId);
      const [again] = await claimTasks(store, B);
      assert.equal(again?.seq, t1.seq);
      assert.deepEqual(await stored(t1.seq), [0]);
      // The old holder is fenced off now; the new one adds on.
      assert.equal(await saveCheckpoint(store, { seq: t1.seq, workerId: A.workerId }, row(1)), false);
      assert.equal(await saveCheckpoint(store, { seq: t1.seq, workerId: B.workerId }, row(1)), true);
      assert.equal(await failTask(store, again!, B.workerId, crash, 1000, Date.now() - 120_000), "retried");
      assert.deepEqual(await stored(t1.seq), [0, 1]);
      const [third] = await claimTasks(store, A, { now: Date.now() + 120_000 });
      assert.equal(third?.seq, t1.seq);
      assert.equal(await completeTask(store, third!, A.workerId, { results: { result: "{}" } }, 1000), true);
      assert.deepEqual(await stored(t1.seq), []);

      const t2 = await claimNew();
      await saveCheckpoint(store, { seq: t2.seq, workerId: A.workerId }, row(0));
      assert.equal(await failTask(store, t2, A.workerId, final, 1000), "failed");
      assert.deepEqual(await stored(t2.seq), []);
    });
  });
}
