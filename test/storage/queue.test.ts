// The job store and queue as one suite, run on both backends: SQLite in a temp data dir and PostgreSQL in a fresh
// database (dropped afterwards). Times are passed explicitly, so leases and backoff need no sleeping.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import type { TaskFailure } from "../../src/jobs/failure.js";
import {
  claimTasks,
  completeTask,
  failTask,
  type Lease,
  reapExpired,
  releaseTask,
  renewLease,
} from "../../src/jobs/queue.js";
import { sweepExpired } from "../../src/jobs/retention.js";
import type { BlobStore } from "../../src/storage/blobs/index.js";
import { newBlobKey } from "../../src/storage/blobs/keys.js";
import { localBlobStore } from "../../src/storage/blobs/local.js";
import { getClient, listClients, updateClient } from "../../src/storage/clients.js";
import { openStore, type Store } from "../../src/storage/db.js";
import {
  audioSecondsSince,
  countInFlight,
  getJob,
  insertJob,
  type JobRow,
  type TaskRow,
} from "../../src/storage/jobs.js";
import { insertTestClient } from "../helpers/clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const T = 1_700_000_000_000; // a fixed "now" for everything that takes one
const RETENTION = 3600_000;

interface Backend {
  /** A fresh, empty store location: databaseUrl for PostgreSQL, dataDir for both. */
  create(): Promise<{ databaseUrl?: string; dataDir: string }>;
  destroy(): Promise<void>;
}

function sqliteBackend(): Backend {
  let dir = "";
  return {
    async create() {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-store-"));
      return { dataDir: path.join(dir, "data") };
    },
    async destroy() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresBackend(): Backend {
  let db: PgDatabase | undefined;
  let dir = "";
  return {
    async create() {
      db = await createPgDatabase();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-store-pg-"));
      return { databaseUrl: db.url, dataDir: path.join(dir, "data") };
    },
    async destroy() {
      await db?.drop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// CI runs where PostgreSQL is up; elsewhere the PostgreSQL half is reported as skipped, with the reason.
const pgSkip = await pgUnavailable();

for (const [label, makeBackend, skip] of [
  ["SQLite", sqliteBackend, false],
  ["PostgreSQL", postgresBackend, pgSkip ?? false],
] as const) {
  describe(`job store and queue on ${label}`, { skip }, () => {
    const backend = makeBackend();
    let where: { databaseUrl?: string; dataDir: string };
    let store: Store;
    let blobs: BlobStore;
    const clientA = "client-a";
    const clientB = "client-b";

    before(async () => {
      where = await backend.create();
      store = await openStore(where);
      blobs = localBlobStore(where.dataDir);
      for (const id of [clientA, clientB]) {
        await insertTestClient(store, id, "standard", T);
      }
    });
    after(async () => {
      await store?.close();
      await backend.destroy();
    });
    beforeEach(async () => {
      await store.db.deleteFrom("jobs").execute();
    });

    let n = 0;
    /** Inserts a queued job and returns its id. */
    async function addJob(
      opts: { client?: string; now?: number; audio_s?: number | null; max_attempts?: number; blob_key?: string } = {},
    ): Promise<string> {
      const id = `job${String(++n).padStart(4, "0")}${randomBytes(3).toString("hex")}`;
      await insertJob(
        store,
        {
          id,
          client_id: opts.client ?? clientA,
          config: JSON.stringify({ model_name: "sommers" }),
          blob_key: opts.blob_key ?? randomBytes(16).toString("base64url"),
          file_format: "wav",
          audio_s: opts.audio_s === undefined ? 10 : opts.audio_s,
          max_attempts: opts.max_attempts ?? 3,
        },
        opts.now ?? T,
      );
      return id;
    }
    /** A job's transcribe task: the base queue of this suite. */
    const task = async (id: string): Promise<TaskRow> => {
      const t = await store.db
        .selectFrom("tasks")
        .selectAll()
        .where("job_id", "=", id)
        .where("kind", "=", "transcribe")
        .executeTakeFirst();
      return t ?? ({ seq: -1 } as TaskRow);
    };
    /** The job as the API reads it, with its transcribe task's lease fields. */
    const job = async (id: string): Promise<JobRow & Pick<TaskRow, "locked_by" | "lease_until" | "run_at">> => {
      const j = await getJob(store, id);
      assert.ok(j, `job ${id} exists`);
      const t = await task(id);
      return { ...j, locked_by: t.locked_by, lease_until: t.lease_until, run_at: t.run_at };
    };
    const lease = (workerId: string, leaseMs = 1000) => ({ workerId, leaseMs });
    // The lifecycle's transitions on transcribe tasks, addressed by job id as the assertions below read best.
    type Claimed = TaskRow & { id: string };
    const asClaimed = (t: TaskRow): Claimed => ({ ...t, id: t.job_id });
    const claim = async (s: Store, l: Lease, n = 1, now = Date.now()): Promise<Claimed[]> =>
      (await claimTasks(s, l, { kinds: ["transcribe"], n, now })).map(asClaimed);
    const complete = async (s: Store, id: string, w: string, result: unknown, retentionMs: number, now = Date.now()) =>
      completeTask(s, await task(id), w, { results: { result: JSON.stringify(result) } }, retentionMs, now);
    const fail = async (
      s: Store,
      row: { id: string },
      w: string,
      f: TaskFailure,
      retentionMs: number,
      now = Date.now(),
    ) => failTask(s, await task(row.id), w, f, retentionMs, now);
    const release = async (s: Store, id: string, w: string) => releaseTask(s, await task(id), w);
    const renew = async (id: string, l: Lease, progress?: number) => renewLease(store, await task(id), l, progress);

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

    describe("insert and claim", () => {
      it("a new job is queued with no attempt and no lease", async () => {
        const id = await addJob({ audio_s: 3.888 });
        const j = await job(id);
        assert.equal(j.state, "queued");
        assert.equal(j.attempts, 0);
        assert.equal(j.locked_by, null);
        assert.equal(j.lease_until, null);
        assert.equal(j.run_at, T);
        assert.equal(j.created_at, T);
        assert.equal(j.audio_s, 3.888);
        assert.equal(j.expired, 0);
        assert.equal(typeof j.seq, "number");
        assert.equal(await getJob(store, "missing"), undefined);
      });

      it("claims in submission (seq) order, one or several at a time", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push(await addJob({ client: i % 2 ? clientA : clientB }));
        const seqs = await Promise.all(ids.map(async (id) => (await job(id)).seq));
        assert.deepEqual(
          seqs,
          [...seqs].sort((a, b) => a - b),
          "seq grows with submission",
        );

        const [first] = await claim(store, lease("w1"), 1, T);
        assert.equal(first?.id, ids[0]);
        const two = await claim(store, lease("w1"), 2, T);
        assert.deepEqual(
          two.map((j) => j.id),
          ids.slice(1, 3),
        );
        const rest = await claim(store, lease("w2"), 10, T);
        assert.deepEqual(
          rest.map((j) => j.id),
          ids.slice(3),
        );
        assert.deepEqual(await claim(store, lease("w2"), 1, T), []);
      });

      it("a claim marks the job running, leased to the worker, with the attempt counted", async () => {
        const id = await addJob();
        const [c] = await claim(store, lease("w1", 5000), 1, T + 10);
        assert.ok(c);
        assert.equal(c.id, id);
        assert.equal(c.state, "running");
        assert.equal(c.locked_by, "w1");
        assert.equal(c.lease_until, T + 10 + 5000);
        assert.equal(c.attempts, 1);
        assert.equal(c.started_at, T + 10);
        assert.deepEqual(asClaimed(await task(id)), c, "the returned row is the stored row");
      });

      it("does not claim a job whose run_at is still ahead", async () => {
        const id = await addJob({ now: T + 5000 });
        assert.deepEqual(await claim(store, lease("w1"), 1, T + 4999), []);
        assert.equal((await claim(store, lease("w1"), 1, T + 5000))[0]?.id, id);
      });
    });

    describe("leases", () => {
      it("a claimed job is not claimed again while its lease is valid, and is after it expires", async () => {
        const id = await addJob();
        const [c1] = await claim(store, lease("w1", 1000), 1, T);
        assert.equal(c1?.attempts, 1);
        assert.deepEqual(await claim(store, lease("w2", 1000), 1, T + 500), []);
        assert.deepEqual(
          await reapExpired(store, RETENTION, T + 1000),
          { requeued: 0, failed: 0 },
          "lease_until itself is still valid",
        );
        assert.deepEqual(await claim(store, lease("w2", 1000), 1, T + 1000), []);

        assert.deepEqual(await reapExpired(store, RETENTION, T + 1001), { requeued: 1, failed: 0 });
        const requeued = await job(id);
        assert.equal(requeued.state, "queued");
        assert.equal(requeued.locked_by, null);
        assert.equal(requeued.attempts, 1);

        const [c2] = await claim(store, lease("w2", 1000), 1, T + 1001);
        assert.equal(c2?.id, id);
        assert.equal(c2?.attempts, 2);
        assert.equal(c2?.locked_by, "w2");
        assert.equal(c2?.started_at, T, "started_at keeps the first start");
      });

      it("a re-queued job keeps its place before later submissions", async () => {
        const first = await addJob();
        await claim(store, lease("w1", 1000), 1, T);
        const second = await addJob({ now: T + 100 });
        await reapExpired(store, RETENTION, T + 2000);
        assert.deepEqual(
          (await claim(store, lease("w2"), 2, T + 2000)).map((j) => j.id),
          [first, second],
        );
      });

      it("the worker that lost its lease can no longer complete, fail or renew the job (fencing)", async () => {
        const id = await addJob();
        const [c1] = await claim(store, lease("w1", 1000), 1, T);
        await reapExpired(store, RETENTION, T + 2000);
        await claim(store, lease("w2", 1000), 1, T + 2000);
        assert.equal(await complete(store, id, "w1", { utterances: [] }, RETENTION, T + 2100), false);
        assert.equal(
          await fail(store, c1!, "w1", { code: "E500", message: "x", retryable: true }, RETENTION, T + 2100),
          "lost",
        );
        assert.equal(await renew(id, lease("w1")), false);
        const j = await job(id);
        assert.equal(j.state, "running");
        assert.equal(j.locked_by, "w2");
        assert.equal(await complete(store, id, "w2", { utterances: [] }, RETENTION, T + 2200), true);
      });

      it("renewLease extends the owner's lease and records progress", async () => {
        const id = await addJob();
        const now = Date.now();
        await claim(store, lease("w1", 1000), 1, now);
        assert.equal(await renew(id, lease("w1", 60_000), 0.5), true);
        const j = await job(id);
        assert.equal(j.progress, 0.5);
        assert.ok(j.lease_until! >= now + 60_000 && j.lease_until! < Date.now() + 60_000 + 1, String(j.lease_until));
        assert.equal(await renew(id, lease("w2", 60_000)), false);
        assert.equal(await renew("missing", lease("w1")), false);
      });

      it("reapExpired fails a job with E500 once its attempts are used up", async () => {
        const id = await addJob({ max_attempts: 2 });
        await claim(store, lease("w1", 1000), 1, T);
        assert.deepEqual(await reapExpired(store, RETENTION, T + 1001), { requeued: 1, failed: 0 });
        await claim(store, lease("w2", 1000), 1, T + 1001);
        assert.deepEqual(await reapExpired(store, RETENTION, T + 2002), { requeued: 0, failed: 1 });
        const j = await job(id);
        assert.equal(j.state, "failed");
        assert.equal(j.error_code, "E500");
        assert.ok(j.error_message);
        assert.equal(j.attempts, 2);
        assert.equal(j.locked_by, null);
        assert.equal(j.finished_at, T + 2002);
        assert.equal(j.expires_at, T + 2002 + RETENTION);
        assert.deepEqual(await claim(store, lease("w3"), 1, T + 10_000), []);
      });

      it("releaseJob hands the job back untouched and gives the attempt back", async () => {
        const id = await addJob();
        await claim(store, lease("w1"), 1, T);
        await release(store, id, "w2"); // not the owner: nothing happens
        assert.equal((await job(id)).state, "running");
        await release(store, id, "w1");
        const j = await job(id);
        assert.deepEqual([j.state, j.attempts, j.locked_by, j.lease_until], ["queued", 0, null, null]);
        assert.equal((await claim(store, lease("w2"), 1, T))[0]?.attempts, 1);
      });
    });

    describe("complete and fail", () => {
      it("completeJob stores the result and the retention deadline, and clears the lease", async () => {
        const id = await addJob();
        await claim(store, lease("w1"), 1, T);
        const result = { utterances: [{ start_at: 0, duration: 1000, msg: "안녕", spk: 0, lang: "ko" }] };
        assert.equal(await complete(store, id, "w1", result, RETENTION, T + 500), true);
        const j = await job(id);
        assert.equal(j.state, "completed");
        assert.deepEqual(JSON.parse(j.result!), result);
        assert.equal(j.progress, 1);
        assert.equal(j.locked_by, null);
        assert.equal(j.lease_until, null);
        assert.equal(j.finished_at, T + 500);
        assert.equal(j.expires_at, T + 500 + RETENTION);
        assert.equal(await complete(store, id, "w1", result, RETENTION, T + 600), false, "only once");
        assert.deepEqual(
          await reapExpired(store, RETENTION, T + 10 * RETENTION),
          { requeued: 0, failed: 0 },
          "final jobs are not reaped",
        );
      });

      it("failJob retries with backoff while attempts remain, then fails for good", async () => {
        const id = await addJob({ max_attempts: 3 });
        const f = { code: "E500" as const, message: "engine crashed", retryable: true };

        const [a1] = await claim(store, lease("w1"), 1, T);
        assert.equal(await fail(store, a1!, "w1", f, RETENTION, T), "retried");
        let j = await job(id);
        assert.deepEqual(
          [j.state, j.locked_by, j.lease_until, j.run_at, j.error_code],
          ["queued", null, null, T + 1000, null],
        );
        assert.deepEqual(await claim(store, lease("w1"), 1, T + 999), [], "backoff: not before run_at");

        const [a2] = await claim(store, lease("w1"), 1, T + 1000);
        assert.equal(a2?.attempts, 2);
        assert.equal(await fail(store, a2!, "w1", f, RETENTION, T + 1000), "retried");
        assert.equal((await job(id)).run_at, T + 1000 + 2000, "backoff doubles");

        const [a3] = await claim(store, lease("w1"), 1, T + 3000);
        assert.equal(a3?.attempts, 3);
        assert.equal(await fail(store, a3!, "w1", f, RETENTION, T + 3000), "failed");
        j = await job(id);
        assert.equal(j.state, "failed");
        assert.equal(j.error_code, "E500");
        assert.equal(j.error_message, "engine crashed");
        assert.equal(j.finished_at, T + 3000);
        assert.equal(j.expires_at, T + 3000 + RETENTION);
        assert.equal(j.locked_by, null);
        assert.deepEqual(await claim(store, lease("w1"), 1, T + 100_000), []);
      });

      it("a failure that is not retryable is final at once", async () => {
        const id = await addJob({ max_attempts: 5 });
        const [c] = await claim(store, lease("w1"), 1, T);
        assert.equal(
          await fail(store, c!, "w1", { code: "H0010", message: "cannot decode", retryable: false }, RETENTION, T),
          "failed",
        );
        const j = await job(id);
        assert.deepEqual([j.state, j.error_code, j.attempts], ["failed", "H0010", 1]);
      });
    });

    describe("concurrent claimers", () => {
      it("never hand the same job to two workers", async () => {
        const total = 40;
        const ids = new Set<string>();
        for (let i = 0; i < total; i++) ids.add(await addJob());
        const got = new Map<string, string>(); // job id → worker
        for (let round = 0; round < 20 && got.size < total; round++) {
          const batches = await Promise.all(
            Array.from({ length: 4 }, (_, w) =>
              claim(store, lease(`w${w}`), 3, T).then((rows) => rows.map((r) => [r.id, `w${w}`] as const)),
            ),
          );
          for (const [id, worker] of batches.flat()) {
            assert.equal(got.has(id), false, `${id} claimed by ${got.get(id)} and ${worker}`);
            got.set(id, worker);
          }
        }
        assert.equal(got.size, total);
        assert.deepEqual(new Set(got.keys()), ids);
        for (const [id, worker] of got) {
          const j = await job(id);
          assert.equal(j.locked_by, worker);
          assert.equal(j.attempts, 1);
        }
      });

      it("separate connections pools (separate processes) claiming one job at a time share the queue without overlap", async () => {
        const total = 24;
        for (let i = 0; i < total; i++) await addJob();
        const others = [store, await openStore(where), await openStore(where)];
        try {
          const claimed: string[] = [];
          await Promise.all(
            Array.from({ length: 6 }, async (_, w) => {
              const s = others[w % others.length]!;
              for (;;) {
                const [j] = await claim(s, lease(`p${w}`), 1, T);
                if (!j) return;
                claimed.push(j.id);
              }
            }),
          );
          assert.equal(claimed.length, total);
          assert.equal(new Set(claimed).size, total);
        } finally {
          await others[1]!.close();
          await others[2]!.close();
        }
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
    });
  });
}
