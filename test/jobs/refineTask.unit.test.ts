// The refine kind on the shared task lifecycle, on both backends: its task starts in the same transaction that
// completes the transcribe task, is claimed with its own lease (the job stays completed and readable), is fenced,
// retries with backoff and reaps like every kind, waits behind queued transcriptions, and keeps the audio out of the
// orphan sweep while pending.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { readResponse } from "../../src/api/readResponse.js";
import type { RefineErrorCode } from "../../src/errors.js";
import { sweepExpired } from "../../src/jobs/retention.js";
import type { BlobStore } from "../../src/storage/blobs/index.js";
import { newBlobKey } from "../../src/storage/blobs/keys.js";
import { localBlobStore } from "../../src/storage/blobs/local.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob, insertJob, type JobRow } from "../../src/storage/jobs.js";
import {
  claimTasks,
  completeTask,
  failTask,
  type Lease,
  reapExpired,
  releaseTask,
  renewLease,
  type TaskCompletion,
  type TaskRow,
} from "../../src/storage/tasks.js";
import { insertTestClient } from "../helpers/clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const T = 1_700_000_000_000;
const LEASE = { workerId: "w1", leaseMs: 30_000 };
const OTHER = { workerId: "w2", leaseMs: 30_000 };

const pgSkip = await pgUnavailable();

for (const [label, usePg, skip] of [
  ["SQLite", false, false],
  ["PostgreSQL", true, pgSkip ?? false],
] as const) {
  describe(`refine tasks on ${label}`, { skip }, () => {
    let db: PgDatabase | undefined;
    let dir = "";
    let store: Store;
    let blobs: BlobStore;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-refine-"));
      let databaseUrl: string | undefined;
      if (usePg) {
        db = await createPgDatabase("sori_refine");
        databaseUrl = db.url;
      }
      store = await openStore({ databaseUrl, dataDir: path.join(dir, "data") });
      blobs = localBlobStore(path.join(dir, "data"));
      await insertTestClient(store, "c", "enterprise", T);
    });
    after(async () => {
      await store?.close();
      await db?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await store.db.deleteFrom("jobs").execute();
    });

    const RETENTION = 3600_000;
    const refineTask = async (jobId: string): Promise<TaskRow> =>
      (await store.db
        .selectFrom("tasks")
        .selectAll()
        .where("job_id", "=", jobId)
        .where("kind", "=", "refine")
        .executeTakeFirst())!;
    // The refine kind's transitions (the one lifecycle), as the assertions below read best.
    const claimRefinements = (l: Lease, n: number, now: number) => claimTasks(store, l, { kinds: ["refine"], n, now });
    const completeRefinement = async (jobId: string, w: string, refined: unknown) =>
      completeTask(
        store,
        await refineTask(jobId),
        w,
        { results: { refine_result: JSON.stringify(refined) } },
        RETENTION,
      );
    const failRefinement = async (t: TaskRow, w: string, code: RefineErrorCode, retryable: boolean, now = T) =>
      failTask(store, t, w, { code, message: code, retryable }, RETENTION, now);

    /** A job that asked for refinement, run through its transcribe task to completed with the refine task queued. */
    async function completedJob(
      blobKey = randomBytes(16).toString("base64url"),
      next: TaskCompletion["next"] = { kind: "refine" },
    ): Promise<JobRow> {
      const id = `job${randomBytes(6).toString("hex")}`;
      const config = JSON.stringify({ use_refinement: true, language: "ko" });
      await insertJob(
        store,
        { id, client_id: "c", config, blob_key: blobKey, file_format: "wav", audio_s: 3, max_attempts: 2 },
        T,
      );
      const [claimed] = await claimTasks(
        store,
        { workerId: "base", leaseMs: 30_000 },
        { kinds: ["transcribe"], now: T },
      );
      assert.equal(claimed?.job_id, id);
      const base = { utterances: [{ start_at: 0, duration: 1000, msg: "안녕", spk: 0, lang: "ko" }] };
      assert.ok(
        await completeTask(store, claimed, "base", { results: { result: JSON.stringify(base) }, next }, RETENTION, T),
      );
      return (await getJob(store, id))!;
    }

    it("starts queued with the base completion; the plain read is complete while refined reads say queued", async () => {
      const job = await completedJob();
      assert.equal(job.state, "completed");
      assert.equal(job.refine_status, "queued");
      assert.deepEqual(readResponse(job, true), { id: job.id, status: "completed", refine_status: "queued" });
      const plain = readResponse(job, false) as { results: { utterances: unknown[] } };
      assert.equal(plain.results.utterances.length, 1);
    });

    it("claims with its own lease, completes fenced, and serves only utterances", async () => {
      const job = await completedJob();
      const [claimed] = await claimRefinements(LEASE, 1, T);
      assert.equal(claimed?.job_id, job.id);
      assert.equal(claimed?.kind, "refine");
      assert.equal(claimed?.state, "running");
      assert.equal(claimed?.attempts, 1);
      const row = (await getJob(store, job.id))!;
      assert.equal(row.state, "completed", "the base job is untouched");
      assert.equal(row.refine_status, "processing");
      assert.equal(row.refine_attempts, 1);
      assert.deepEqual(await claimRefinements(OTHER, 1, T), [], "nothing else to claim");
      assert.deepEqual(readResponse(row, true), { id: job.id, status: "completed", refine_status: "processing" });
      assert.equal(await renewLease(store, claimed, OTHER), false, "a stranger cannot renew");
      assert.equal(await renewLease(store, claimed, LEASE), true);
      const refined = { utterances: [{ start_at: 0, duration: 1000, msg: "안녕하세요", spk: 0, lang: "ko" }] };
      assert.equal(await completeRefinement(job.id, OTHER.workerId, refined), false, "fenced");
      assert.equal(await completeRefinement(job.id, LEASE.workerId, refined), true);
      const body = readResponse((await getJob(store, job.id))!, true);
      // A read adds the real service's `spk_type` to each utterance (src/api/readResponse.ts); it is not stored.
      const read = { utterances: refined.utterances.map((u) => ({ ...u, spk_type: "NORMAL" })) };
      assert.deepEqual(body, { id: job.id, status: "completed", refine_status: "completed", results: read });
    });

    it("retries a retryable failure with backoff while attempts remain, then fails with the code; base stays completed", async () => {
      const job = await completedJob();
      let [c] = await claimRefinements(LEASE, 1, T);
      assert.equal(await failRefinement(c!, LEASE.workerId, "refiner_failed", true), "retried");
      assert.equal((await refineTask(job.id)).run_at, T + 1000, "backoff, as for every kind");
      assert.deepEqual(await claimRefinements(LEASE, 1, T + 999), [], "not before run_at");
      [c] = await claimRefinements(LEASE, 1, T + 1000);
      assert.equal(c?.attempts, 2);
      assert.equal(await failRefinement(c!, LEASE.workerId, "refiner_failed", true, T + 1000), "failed");
      const row = (await getJob(store, job.id))!;
      assert.equal(row.state, "completed");
      assert.deepEqual(readResponse(row, true), {
        id: job.id,
        status: "completed",
        refine_status: "failed",
        refine_error: { code: "refiner_failed" },
      });
    });

    it("a missing input fails at once with refiner_input_unavailable", async () => {
      const job = await completedJob();
      const [c] = await claimRefinements(LEASE, 1, T);
      assert.equal(await failRefinement(c!, LEASE.workerId, "refiner_input_unavailable", false), "failed");
      assert.equal((await getJob(store, job.id))!.refine_error, "refiner_input_unavailable");
    });

    it("reaps an expired refinement lease: requeued, then failed once attempts are used", async () => {
      const job = await completedJob();
      await claimRefinements(LEASE, 1, T);
      assert.deepEqual(await reapExpired(store, RETENTION, T + 1000), { requeued: 0, failed: 0 }, "lease still valid");
      assert.deepEqual(await reapExpired(store, RETENTION, T + 60_000), { requeued: 1, failed: 0 });
      await claimRefinements(LEASE, 1, T + 60_000);
      assert.deepEqual(await reapExpired(store, RETENTION, T + 120_000), { requeued: 0, failed: 1 });
      const row = (await getJob(store, job.id))!;
      assert.equal(row.refine_status, "failed");
      assert.equal(row.refine_error, "refiner_failed");
    });

    it("release gives the claim and its attempt back", async () => {
      const job = await completedJob();
      const [c] = await claimRefinements(LEASE, 1, T);
      await releaseTask(store, c!, LEASE.workerId);
      const row = (await getJob(store, job.id))!;
      assert.equal(row.refine_status, "queued");
      assert.equal(row.refine_attempts, 0);
    });

    it("an enqueue failure is final at completion", async () => {
      const { id } = await completedJob("k", {
        kind: "refine",
        failed: { code: "refiner_enqueue_failed", message: null },
      });
      assert.deepEqual(await claimRefinements(LEASE, 1, T), []);
      assert.deepEqual(readResponse((await getJob(store, id))!, true), {
        id,
        status: "completed",
        refine_status: "failed",
        refine_error: { code: "refiner_enqueue_failed" },
      });
    });

    it("waits while a transcription is queued: lower priority, whatever the order of creation", async () => {
      const job = await completedJob();
      await insertJob(
        store,
        { id: "later", client_id: "c", config: "{}", blob_key: "b", file_format: "wav", audio_s: 1, max_attempts: 2 },
        T + 5,
      );
      const [first, second] = await claimTasks(store, LEASE, { n: 2, now: T + 10 });
      assert.deepEqual(
        [first?.kind, first?.job_id, second?.kind, second?.job_id],
        ["transcribe", "later", "refine", job.id],
      );
    });

    it("the orphan sweep keeps the audio of a pending refinement", async () => {
      const key = newBlobKey();
      const file = path.join(dir, "data", "blobs", key);
      fs.writeFileSync(file, "audio");
      const old = new Date(Date.now() - 2 * 3600_000);
      fs.utimesSync(file, old, old);
      await completedJob(key);
      const r = await sweepExpired(store, blobs, T + 10);
      assert.equal(r.orphans, 0);
      assert.ok(fs.existsSync(file));
    });
  });
}
