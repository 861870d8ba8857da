// The job store on both backends: migrations, clients, the submit limits' aggregates and retention (the sweep of
// src/jobs/retention.ts). The task lifecycle has its own suite (tasks.unit.test.ts).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { sweepExpired } from "../../src/jobs/retention.js";
import type { BlobStore } from "../../src/storage/blobs/index.js";
import { newBlobKey } from "../../src/storage/blobs/keys.js";
import { getClient, listClients, updateClient } from "../../src/storage/clients.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { audioSecondsSince, countInFlight, insertJob } from "../../src/storage/jobs.js";
import { completeTask } from "../../src/storage/tasks.js";
import { clientA, clientB, RETENTION, type StoreWhere, storeBackends, T, useStore } from "../helpers/storeSuite.js";

for (const [label, makeBackend, skip] of await storeBackends()) {
  describe(`job store on ${label}`, { skip }, () => {
    const fx = useStore(makeBackend);
    const { addJob, job, lease, claim, complete, fail, release } = fx;
    let where: StoreWhere;
    let store: Store;
    let blobs: BlobStore;
    before(() => {
      ({ where, store, blobs } = fx);
    });

    describe("migrations", () => {
      it("create the clients, jobs and tasks tables with their indexes", async () => {
        const tables = await store.db.introspection.getTables();
        const names = tables.map((t) => t.name);
        assert.ok(names.includes("clients") && names.includes("jobs") && names.includes("tasks"), names.join());
        const columns = (table: string) => tables.find((t) => t.name === table)!.columns;
        const jobCols = columns("jobs").map((c) => c.name);
        for (const c of [
          "seq",
          "id",
          "client_id",
          "config",
          "blob_key",
          "result",
          "expires_at",
          "expired",
          "deleted_at",
          "refine_result",
          "redacted_blob_key",
        ]) {
          assert.ok(jobCols.includes(c), `jobs.${c}`);
        }
        for (const c of ["state", "locked_by", "refine_status", "refine_locked_by"])
          assert.ok(!jobCols.includes(c), `jobs.${c} moved to tasks`);
        const taskCols = columns("tasks").map((c) => c.name);
        for (const c of [
          "seq",
          "job_id",
          "kind",
          "priority",
          "state",
          "attempts",
          "max_attempts",
          "run_at",
          "locked_by",
          "lease_until",
          "error_code",
        ]) {
          assert.ok(taskCols.includes(c), `tasks.${c}`);
        }
        for (const table of ["jobs", "tasks"]) {
          const seq = columns(table).find((c) => c.name === "seq")!;
          assert.equal(seq.isAutoIncrementing || seq.hasDefaultValue, true);
        }
      });

      it("are recorded, and opening the store again applies nothing twice", async () => {
        const again = await openStore(where);
        try {
          const applied = (await again.db
            .selectFrom("kysely_migration" as never)
            .select("name" as never)
            .execute()) as unknown as { name: string }[];
          const shipped = fs
            .readdirSync(path.join(import.meta.dirname, "../../src/storage/migrations"))
            .map((f) => f.replace(/\.ts$/, ""))
            .sort();
          assert.deepEqual(applied.map((r) => r.name).sort(), shipped);
          assert.equal((await listClients(again)).length, 2, "data survives reopening");
        } finally {
          await again.close();
        }
      });

      it("enforce the job → client reference and unique job ids", async () => {
        await assert.rejects(addJob({ client: "no-such-client" }));
        const id = await addJob();
        await assert.rejects(
          insertJob(
            store,
            { id, client_id: clientA, config: "{}", blob_key: "x", file_format: "wav", audio_s: 1, max_attempts: 1 },
            T,
          ),
        );
      });
    });

    describe("clients", () => {
      it("insert, read, update", async () => {
        const c = await getClient(store, clientA);
        assert.ok(c);
        assert.equal(c.tier, "standard");
        assert.equal(c.disabled, 0);
        assert.equal(c.created_at, T);
        assert.equal(c.max_concurrent, null);
        assert.equal(await updateClient(store, clientB, { max_concurrent: 2, quota_s: 1.5, read_rps: 0.25 }), true);
        const b = await getClient(store, clientB);
        assert.deepEqual([b?.max_concurrent, b?.quota_s, b?.read_rps], [2, 1.5, 0.25]);
        assert.equal(await updateClient(store, "nobody", { disabled: 1 }), false);
        assert.equal(await updateClient(store, clientA, {}), true);
        assert.equal(await updateClient(store, "nobody", {}), false);
        assert.equal(await getClient(store, "nobody"), undefined);
      });
    });

    describe("submit limits", () => {
      it("countInFlight counts a client's queued and running jobs only", async () => {
        assert.equal(await countInFlight(store, clientA), 0);
        const [q1, , r1, c1, f1] = [await addJob(), await addJob(), await addJob(), await addJob(), await addJob()];
        void q1;
        await addJob({ client: clientB });
        // Claim in order: q1..f1 are clientA's first five; claim three of them and finish two.
        const claimed = await claim(store, lease("w1"), 5, T);
        for (const j of claimed) if (![r1, c1, f1].includes(j.id)) await release(store, j.id, "w1");
        await complete(store, c1, "w1", {}, RETENTION, T);
        const fj = await job(f1);
        await fail(store, fj, "w1", { code: "E500", message: "x", retryable: false }, RETENTION, T);
        assert.deepEqual(
          [(await job(r1)).state, (await job(c1)).state, (await job(f1)).state],
          ["running", "completed", "failed"],
        );
        assert.equal(await countInFlight(store, clientA), 3); // two queued, one running
        assert.equal(await countInFlight(store, clientB), 1);
        assert.equal(await countInFlight(store, "nobody"), 0);
        assert.equal(typeof (await countInFlight(store, clientA)), "number");
      });

      it("audioSecondsSince sums a client's audio from `since` on, whatever the job's state", async () => {
        assert.equal(await audioSecondsSince(store, clientA, 0), 0);
        await addJob({ audio_s: 100, now: T - 1 });
        await addJob({ audio_s: 3.888, now: T });
        await addJob({ audio_s: 10.5, now: T + 1000 });
        await addJob({ audio_s: null, now: T + 2000 });
        await addJob({ client: clientB, audio_s: 7, now: T });
        const [c] = await claim(store, lease("w1"), 1, T + 5000);
        await complete(store, c!.id, "w1", {}, RETENTION, T + 5000);
        const s = await audioSecondsSince(store, clientA, T);
        assert.equal(typeof s, "number");
        assert.ok(Math.abs(s - 14.388) < 1e-9, String(s));
        assert.ok(Math.abs((await audioSecondsSince(store, clientA, 0)) - 114.388) < 1e-9);
        assert.equal(await audioSecondsSince(store, clientA, T + 1001), 0);
        assert.equal(await audioSecondsSince(store, clientB, T), 7);
      });
    });

    describe("retention", () => {
      // The local store's files, written directly: the sweep reads their age from the mtime.
      const blobPath = (key: string): string => path.join(where.dataDir, "blobs", key);
      const writeBlob = (): string => {
        const key = newBlobKey();
        fs.writeFileSync(blobPath(key), "audio");
        return key;
      };
      const blobExists = (key: string): boolean => fs.existsSync(blobPath(key));

      it("marks finished jobs expired after their retention and drops the result", async () => {
        const done = await addJob();
        const failed = await addJob();
        const queued = await addJob();
        const [c1, c2] = await claim(store, lease("w1"), 2, T);
        await complete(store, c1!.id, "w1", { utterances: [] }, 1000, T);
        await fail(store, c2!, "w1", { code: "E500", message: "x", retryable: false }, 2000, T);
        assert.deepEqual([c1!.id, c2!.id], [done, failed]);

        assert.deepEqual(await sweepExpired(store, blobs, T + 999), { expired: 0, orphans: 0 });
        assert.deepEqual(await sweepExpired(store, blobs, T + 1001), { expired: 1, orphans: 0 });
        let d = await job(done);
        assert.deepEqual([d.state, d.expired, d.result, d.blob_key], ["completed", 1, null, null]);
        assert.equal((await job(failed)).expired, 0);

        assert.deepEqual(await sweepExpired(store, blobs, T + 2001), { expired: 1, orphans: 0 });
        const f = await job(failed);
        assert.deepEqual([f.state, f.expired, f.error_code, f.blob_key], ["failed", 1, "E500", null]);
        assert.equal((await job(queued)).expired, 0, "a job that has not ended never expires");
        assert.deepEqual(
          await sweepExpired(store, blobs, T + 3000),
          { expired: 0, orphans: 0 },
          "each job is swept once",
        );
        d = await job(done);
        assert.equal(d.expired, 1);
      });

      it("removes old blobs that no queued or running job refers to, and only those", async () => {
        const live = writeBlob();
        const running = writeBlob();
        const finished = writeBlob();
        const orphan = writeBlob();
        await addJob({ blob_key: live });
        await addJob({ blob_key: running });
        const finishedId = await addJob({ blob_key: finished });
        // Real clock here: blob age comes from the files' mtime.
        const now = Date.now();
        const claimed = await claim(store, lease("w1", 3 * 3600_000), 3, now);
        await release(store, claimed[0]!.id, "w1"); // `live` back to queued
        await complete(store, finishedId, "w1", {}, 3600_000, now);

        // Young blobs are never touched (an upload may still be being recorded).
        assert.deepEqual(await sweepExpired(store, blobs, now), { expired: 0, orphans: 0 });
        for (const k of [live, running, finished, orphan]) assert.ok(blobExists(k));

        // Two hours on: the finished job's result expired, and the blobs not used by live jobs go.
        const later = now + 2 * 3600_000;
        const r = await sweepExpired(store, blobs, later);
        assert.deepEqual(r, { expired: 1, orphans: 2 });
        assert.ok(blobExists(live), "queued job's audio kept");
        assert.ok(blobExists(running), "running job's audio kept");
        assert.ok(!blobExists(finished), "expired job's audio removed");
        assert.ok(!blobExists(orphan), "orphan removed");
        assert.equal((await job(finishedId)).blob_key, null);
        assert.deepEqual(await sweepExpired(store, blobs, later), { expired: 0, orphans: 0 });
      });

      it("keeps a job's redacted copy of the audio until the job expires, then removes it", async () => {
        const copy = writeBlob();
        const id = await addJob();
        const now = Date.now();
        const [c] = await claim(store, lease("w1", 3 * 3600_000), 1, now);
        const t = await store.db.selectFrom("tasks").selectAll().where("job_id", "=", id).executeTakeFirstOrThrow();
        await completeTask(store, t, "w1", { results: { result: "{}", redacted_blob_key: copy } }, 3 * 3600_000, now);
        assert.equal((await job(c!.id)).redacted_blob_key, copy);
        // Older than the orphan age, but its job still holds it.
        // (Its own audio and the blobs earlier tests left are orphans by then.)
        assert.equal((await sweepExpired(store, blobs, now + 2 * 3600_000, 3600_000)).expired, 0);
        assert.ok(blobExists(copy), "the copy stays while the job's result does");
        // The job expires: its copy goes with its result.
        const r = await sweepExpired(store, blobs, now + 4 * 3600_000, 3600_000);
        assert.equal(r.expired, 1);
        assert.ok(!blobExists(copy), "the copy is removed with the job's result");
        assert.equal((await job(id)).redacted_blob_key, null);
      });
    });
  });
}
