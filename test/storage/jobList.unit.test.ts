// The store side of the job list and delete (src/storage/jobList.ts) on SQLite and, where it is up, PostgreSQL:
// keyset pages, filters and tenant scope; delete ends queued and running work (fenced) and drops every result.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { openStore, type Store } from "../../src/storage/db.js";
import { deleteJob, listJobs } from "../../src/storage/jobList.js";
import { countInFlight, getJob, insertJob } from "../../src/storage/jobs.js";
import { claimTasks, completeTask, type Lease } from "../../src/storage/tasks.js";
import { insertTestClient } from "../helpers/clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const T = 1_700_000_000_000;
const lease = { workerId: "w1", leaseMs: 60_000 };

const pgSkip = (await pgUnavailable()) ?? false;

for (const [label, skip] of [
  ["SQLite", false],
  ["PostgreSQL", pgSkip],
] as const) {
  describe(`job list and delete in the store, on ${label}`, { skip }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-joblist-"));
    let pgDb: PgDatabase | undefined;
    let store: Store;

    before(async () => {
      if (label === "PostgreSQL") pgDb = await createPgDatabase("sori_joblist");
      store = await openStore({ databaseUrl: pgDb?.url, dataDir: path.join(dir, "data") });
      for (const id of ["a", "b"]) {
        await insertTestClient(store, id, "standard", T);
      }
    });
    after(async () => {
      await store?.close();
      await pgDb?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await store.db.deleteFrom("jobs").execute();
    });

    const claimJobs = async (s: Store, l: Lease, n: number, now: number) =>
      (await claimTasks(s, l, { kinds: ["transcribe"], n, now })).map((t) => ({ ...t, id: t.job_id }));
    const completeJob = async (
      s: Store,
      id: string,
      w: string,
      result: unknown,
      retentionMs: number,
      now: number,
      next?: { kind: "refine" },
    ) => {
      const t = await s.db
        .selectFrom("tasks")
        .selectAll()
        .where("job_id", "=", id)
        .where("kind", "=", "transcribe")
        .executeTakeFirstOrThrow();
      return completeTask(
        s,
        t,
        w,
        { results: { result: JSON.stringify(result) }, ...(next ? { next } : {}) },
        retentionMs,
        now,
      );
    };

    const add = async (id: string, client = "a"): Promise<void> =>
      insertJob(
        store,
        {
          id,
          client_id: client,
          config: "{}",
          blob_key: `blob-${id}`,
          file_format: "wav",
          audio_s: 10,
          max_attempts: 3,
        },
        T,
      );

    it("lists newest first in keyset pages, by status, for one client only", async () => {
      for (const id of ["j1", "j2", "j3", "j4", "j5"]) await add(id);
      await add("other", "b");
      const seen: string[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await listJobs(store, { clientId: "a", beforeSeq: before, limit: 2 });
        seen.push(...page.map((j) => j.id));
        if (page.length < 2) break;
        before = page[page.length - 1]!.seq;
      }
      assert.deepEqual(seen, ["j5", "j4", "j3", "j2", "j1"]);
      const [claimed] = await claimJobs(store, lease, 1, T);
      assert.equal(claimed!.id, "j1");
      assert.deepEqual(
        (await listJobs(store, { clientId: "a", states: ["running"], limit: 10 })).map((j) => j.id),
        ["j1"],
      );
      assert.deepEqual(
        (await listJobs(store, { clientId: "b", limit: 10 })).map((j) => j.id),
        ["other"],
      );
    });

    it("delete of a queued job: failed, never claimed, not in flight, not listed; a second delete finds nothing", async () => {
      await add("q");
      assert.deepEqual(await deleteJob(store, "q", T + 1), { blobKey: "blob-q", redactedKey: null });
      const row = (await getJob(store, "q"))!;
      assert.equal(row.state, "failed");
      assert.equal(row.deleted_at, T + 1);
      assert.equal(row.blob_key, null);
      assert.deepEqual(await claimJobs(store, lease, 5, T + 2), []);
      assert.equal(await countInFlight(store, "a"), 0);
      assert.deepEqual(await listJobs(store, { clientId: "a", limit: 10 }), []);
      assert.equal(await deleteJob(store, "q"), undefined);
    });

    it("delete of a running job fences its worker out: the result is discarded", async () => {
      await add("r");
      await claimJobs(store, lease, 1, T);
      await deleteJob(store, "r", T + 5);
      assert.equal(
        await completeJob(store, "r", lease.workerId, { utterances: [{ msg: "secret" }] }, 3600_000, T + 10),
        false,
      );
      const row = (await getJob(store, "r"))!;
      assert.equal(row.result, null);
      assert.equal(row.state, "failed");
    });

    it("delete of a completed job drops the base and refined results and ends a pending refinement", async () => {
      await add("c");
      await claimJobs(store, lease, 1, T);
      assert.ok(
        await completeJob(store, "c", lease.workerId, { utterances: [{ msg: "text" }] }, 3600_000, T + 10, {
          kind: "refine",
        }),
      );
      await store.db.updateTable("jobs").set({ refine_result: '{"utterances":[]}' }).where("id", "=", "c").execute();
      await deleteJob(store, "c", T + 20);
      const row = (await getJob(store, "c"))!;
      assert.equal(row.state, "completed");
      assert.equal(row.result, null);
      assert.equal(row.refine_result, null);
      assert.equal(row.refine_status, "failed");
    });
  });
}
