// The refinement phase's queue on both backends: it starts in the same statement that completes the base job,
// is claimed with its own lease (the base row stays completed and readable), is fenced by refine_locked_by,
// retries and reaps like the base queue, and keeps the audio out of the orphan sweep while pending.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import pg from "pg";
import { readResponse } from "../../src/api/readResponse.js";
import { claimJobs, completeJob } from "../../src/jobs/queue.js";
import { sweepExpired } from "../../src/jobs/retention.js";
import {
  claimRefinements,
  completeRefinement,
  failRefinement,
  reapRefinements,
  releaseRefinement,
  renewRefineLease,
} from "../../src/refine/queue.js";
import { type BlobStore } from "../../src/storage/blobs/index.js";
import { newBlobKey } from "../../src/storage/blobs/keys.js";
import { localBlobStore } from "../../src/storage/blobs/local.js";
import { insertClient } from "../../src/storage/clients.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob, insertJob, type JobRow } from "../../src/storage/jobs.js";

const PG_ADMIN_URL = process.env.SORI_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const T = 1_700_000_000_000;
const LEASE = { workerId: "w1", leaseMs: 30_000 };
const OTHER = { workerId: "w2", leaseMs: 30_000 };

async function pgUnavailable(): Promise<string | null> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    return null;
  } catch (e) {
    return `PostgreSQL unreachable at ${PG_ADMIN_URL} (${(e as Error).message})`;
  } finally {
    await c.end().catch(() => {});
  }
}

async function pgAdmin<R>(f: (c: pg.Client) => Promise<R>): Promise<R> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

const pgSkip = await pgUnavailable();

for (const [label, usePg, skip] of [
  ["SQLite", false, false],
  ["PostgreSQL", true, pgSkip ?? false],
] as const) {
  describe(`refinement queue on ${label}`, { skip }, () => {
    const dbName = `sori_refine_${process.pid}_${randomBytes(4).toString("hex")}`;
    let dir = "";
    let store: Store;
    let blobs: BlobStore;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-refine-"));
      let databaseUrl: string | undefined;
      if (usePg) {
        await pgAdmin((c) => c.query(`CREATE DATABASE ${dbName}`));
        const url = new URL(PG_ADMIN_URL);
        url.pathname = `/${dbName}`;
        databaseUrl = url.toString();
      }
      store = await openStore({ databaseUrl, dataDir: path.join(dir, "data") });
      blobs = localBlobStore(path.join(dir, "data"));
      await insertClient(store, { id: "c", name: "c", secret_hash: "scrypt$x", tier: "enterprise", max_concurrent: null, quota_s: null, read_rps: null }, T);
    });
    after(async () => {
      await store?.close();
      if (usePg) await pgAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
      fs.rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await store.db.deleteFrom("jobs").execute();
    });

    /** A job that asked for refinement, run through the base queue to completed with refine_status queued. */
    async function completedJob(blobKey = randomBytes(16).toString("base64url")): Promise<JobRow> {
      const id = `job${randomBytes(6).toString("hex")}`;
      const config = JSON.stringify({ use_refinement: true, language: "ko" });
      await insertJob(store, { id, client_id: "c", config, blob_key: blobKey, file_format: "wav", audio_s: 3, max_attempts: 2 }, T);
      const [claimed] = await claimJobs(store, { workerId: "base", leaseMs: 30_000 }, 1, T);
      assert.equal(claimed?.id, id);
      const base = { utterances: [{ start_at: 0, duration: 1000, msg: "안녕", spk: 0, lang: "ko" }] };
      assert.ok(await completeJob(store, id, "base", base, 3600_000, T, { refine_status: "queued" }));
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
      const [claimed] = await claimRefinements(store, LEASE, 1, T);
      assert.equal(claimed?.id, job.id);
      assert.equal(claimed?.refine_status, "processing");
      assert.equal(claimed?.refine_attempts, 1);
      assert.equal(claimed?.state, "completed", "the base job is untouched");
      assert.equal(claimed?.locked_by, null, "the base lease is not used");
      assert.deepEqual(await claimRefinements(store, OTHER, 1, T), [], "nothing else to claim");
      assert.deepEqual(readResponse((await getJob(store, job.id))!, true), { id: job.id, status: "completed", refine_status: "processing" });
      assert.equal(await renewRefineLease(store, job.id, OTHER), false, "a stranger cannot renew");
      assert.equal(await renewRefineLease(store, job.id, LEASE), true);
      const refined = { utterances: [{ start_at: 0, duration: 1000, msg: "안녕하세요", spk: 0, lang: "ko" }] };
      assert.equal(await completeRefinement(store, job.id, OTHER.workerId, refined), false, "fenced");
      assert.equal(await completeRefinement(store, job.id, LEASE.workerId, refined), true);
      const body = readResponse((await getJob(store, job.id))!, true);
      assert.deepEqual(body, { id: job.id, status: "completed", refine_status: "completed", results: refined });
    });

    it("retries a retryable failure while attempts remain, then fails with the code; base stays completed", async () => {
      const job = await completedJob();
      let [c] = await claimRefinements(store, LEASE, 1, T);
      assert.equal(await failRefinement(store, c!, LEASE.workerId, "refiner_failed", true), "retried");
      [c] = await claimRefinements(store, LEASE, 1, T);
      assert.equal(c?.refine_attempts, 2);
      assert.equal(await failRefinement(store, c!, LEASE.workerId, "refiner_failed", true), "failed");
      const row = (await getJob(store, job.id))!;
      assert.equal(row.state, "completed");
      assert.deepEqual(readResponse(row, true), { id: job.id, status: "completed", refine_status: "failed", refine_error: { code: "refiner_failed" } });
    });

    it("a missing input fails at once with refiner_input_unavailable", async () => {
      const job = await completedJob();
      const [c] = await claimRefinements(store, LEASE, 1, T);
      assert.equal(await failRefinement(store, c!, LEASE.workerId, "refiner_input_unavailable", false), "failed");
      assert.equal((await getJob(store, job.id))!.refine_error, "refiner_input_unavailable");
    });

    it("reaps an expired refinement lease: requeued, then failed once attempts are used", async () => {
      const job = await completedJob();
      await claimRefinements(store, LEASE, 1, T);
      assert.deepEqual(await reapRefinements(store, T + 1000), { requeued: 0, failed: 0 }, "lease still valid");
      assert.deepEqual(await reapRefinements(store, T + 60_000), { requeued: 1, failed: 0 });
      await claimRefinements(store, LEASE, 1, T + 60_000);
      assert.deepEqual(await reapRefinements(store, T + 120_000), { requeued: 0, failed: 1 });
      const row = (await getJob(store, job.id))!;
      assert.equal(row.refine_status, "failed");
      assert.equal(row.refine_error, "refiner_failed");
    });

    it("release gives the claim and its attempt back", async () => {
      const job = await completedJob();
      await claimRefinements(store, LEASE, 1, T);
      await releaseRefinement(store, job.id, LEASE.workerId);
      const row = (await getJob(store, job.id))!;
      assert.equal(row.refine_status, "queued");
      assert.equal(row.refine_attempts, 0);
    });

    it("an enqueue failure is final at completion", async () => {
      const id = `job${randomBytes(6).toString("hex")}`;
      await insertJob(store, { id, client_id: "c", config: JSON.stringify({ use_refinement: true }), blob_key: "k", file_format: "wav", audio_s: 1, max_attempts: 2 }, T);
      await claimJobs(store, { workerId: "base", leaseMs: 30_000 }, 1, T);
      await completeJob(store, id, "base", { utterances: [] }, 3600_000, T, { refine_status: "failed", refine_error: "refiner_enqueue_failed" });
      assert.deepEqual(await claimRefinements(store, LEASE, 1, T), []);
      assert.deepEqual(readResponse((await getJob(store, id))!, true), { id, status: "completed", refine_status: "failed", refine_error: { code: "refiner_enqueue_failed" } });
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
