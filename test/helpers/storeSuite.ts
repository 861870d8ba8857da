// The job store on both backends for the store suites (test/storage/tasks.unit.test.ts, test/storage/jobs.unit.test.ts):
// SQLite in a temp data dir and PostgreSQL in a fresh database (dropped afterwards), two clients, and the task
// transitions on transcribe tasks addressed by job id, as the assertions read best. Times are passed explicitly, so
// leases and backoff need no sleeping.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach } from "node:test";
import type { TaskFailure } from "../../src/jobs/failure.js";
import type { BlobStore } from "../../src/storage/blobs/index.js";
import { localBlobStore } from "../../src/storage/blobs/local.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob, insertJob, type JobRow } from "../../src/storage/jobs.js";
import {
  claimTasks,
  completeTask,
  failTask,
  type Lease,
  releaseTask,
  renewLease,
  type TaskRow,
} from "../../src/storage/tasks.js";
import { insertTestClient } from "./clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "./pgDatabase.js";

export const T = 1_700_000_000_000; // a fixed "now" for everything that takes one
export const RETENTION = 3600_000;
export const clientA = "client-a";
export const clientB = "client-b";

/** Where a store lives: databaseUrl for PostgreSQL, dataDir for both. */
export type StoreWhere = { databaseUrl?: string; dataDir: string };

interface Backend {
  /** A fresh, empty store location. */
  create(): Promise<StoreWhere>;
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

/** The backends a store suite runs on, with why PostgreSQL is skipped where it is not up (CI runs where it is). */
export async function storeBackends(): Promise<[label: string, makeBackend: () => Backend, skip: string | false][]> {
  const pgSkip = await pgUnavailable();
  return [
    ["SQLite", sqliteBackend, false],
    ["PostgreSQL", postgresBackend, pgSkip ?? false],
  ];
}

export type Claimed = TaskRow & { id: string };

/**
 * Registers, in the calling describe, a fresh store with clients A and B (emptied of jobs before each test), and
 * returns it with the helpers; `where`, `store` and `blobs` are set once its `before` hook has run.
 */
export function useStore(makeBackend: () => Backend) {
  const backend = makeBackend();
  const fx = {
    where: undefined as unknown as StoreWhere,
    store: undefined as unknown as Store,
    blobs: undefined as unknown as BlobStore,
  };
  before(async () => {
    fx.where = await backend.create();
    fx.store = await openStore(fx.where);
    fx.blobs = localBlobStore(fx.where.dataDir);
    for (const id of [clientA, clientB]) {
      await insertTestClient(fx.store, id, "standard", T);
    }
  });
  after(async () => {
    await fx.store?.close();
    await backend.destroy();
  });
  beforeEach(async () => {
    await fx.store.db.deleteFrom("jobs").execute();
  });

  let n = 0;
  /** Inserts a queued job and returns its id. */
  async function addJob(
    opts: { client?: string; now?: number; audio_s?: number | null; max_attempts?: number; blob_key?: string } = {},
  ): Promise<string> {
    const id = `job${String(++n).padStart(4, "0")}${randomBytes(3).toString("hex")}`;
    await insertJob(
      fx.store,
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
  /** A job's transcribe task: the base queue of these suites. */
  const task = async (id: string): Promise<TaskRow> => {
    const t = await fx.store.db
      .selectFrom("tasks")
      .selectAll()
      .where("job_id", "=", id)
      .where("kind", "=", "transcribe")
      .executeTakeFirst();
    return t ?? ({ seq: -1 } as TaskRow);
  };
  /** The job as the API reads it, with its transcribe task's lease fields. */
  const job = async (id: string): Promise<JobRow & Pick<TaskRow, "locked_by" | "lease_until" | "run_at">> => {
    const j = await getJob(fx.store, id);
    assert.ok(j, `job ${id} exists`);
    const t = await task(id);
    return { ...j, locked_by: t.locked_by, lease_until: t.lease_until, run_at: t.run_at };
  };
  const lease = (workerId: string, leaseMs = 1000) => ({ workerId, leaseMs });
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
  const renew = async (id: string, l: Lease, progress?: number) => renewLease(fx.store, await task(id), l, progress);

  return Object.assign(fx, { addJob, task, job, lease, asClaimed, claim, complete, fail, release, renew });
}
