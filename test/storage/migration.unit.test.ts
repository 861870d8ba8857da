// Migration 005 (work kinds) on both backends: a database built by migrations 001-004, holding jobs in every state
// of both old lifecycles (base and refinement, leased ones included), opens with the tasks table, and every job
// reads exactly as it did before (both read bodies and every field), its leases still fence and reap, and queued
// work is claimed in the old order.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { Kysely, type Migration, Migrator, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { readResponse } from "../../src/api/readResponse.js";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob, type JobRow } from "../../src/storage/jobs.js";
import * as m001 from "../../src/storage/migrations/001_initial.js";
import * as m002 from "../../src/storage/migrations/002_refinement.js";
import * as m003 from "../../src/storage/migrations/003_extras.js";
import * as m004 from "../../src/storage/migrations/004_blobs.js";
import { claimTasks, completeTask, reapExpired } from "../../src/storage/tasks.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const T = 1_700_000_000_000;
const LEASE_END = T + 60_000;

const pgSkip = await pgUnavailable();

const cfg = (refine: boolean) => JSON.stringify({ model_name: "sommers", language: "ko", use_refinement: refine });
const base = JSON.stringify({ utterances: [{ start_at: 0, duration: 900, msg: "안녕", spk: 0, lang: "ko" }] });
const refined = JSON.stringify({ utterances: [{ start_at: 0, duration: 900, msg: "안녕하세요", spk: 0, lang: "ko" }] });

/** Old-schema rows: one per state of both lifecycles. Columns not named take the defaults of an old insert. */
const OLD_ROWS: Record<string, unknown>[] = [
  { id: "queued", state: "queued", run_at: T + 5 },
  { id: "retrying", state: "queued", attempts: 1, run_at: T + 2000 },
  {
    id: "running",
    state: "running",
    attempts: 1,
    locked_by: "w1",
    lease_until: LEASE_END,
    progress: 0.4,
    started_at: T + 1,
  },
  {
    id: "completed",
    state: "completed",
    attempts: 1,
    result: base,
    progress: 1,
    started_at: T + 1,
    finished_at: T + 9,
    expires_at: T + 99,
  },
  {
    id: "failed",
    state: "failed",
    attempts: 1,
    error_code: "H0010",
    error_message: "the audio could not be decoded: x",
    started_at: T + 1,
    finished_at: T + 9,
    expires_at: T + 99,
  },
  {
    id: "ref-queued",
    config: cfg(true),
    state: "completed",
    attempts: 1,
    result: base,
    finished_at: T + 9,
    expires_at: T + 99,
    refine_status: "queued",
    refine_attempts: 0,
  },
  {
    id: "ref-processing",
    config: cfg(true),
    state: "completed",
    attempts: 1,
    result: base,
    finished_at: T + 9,
    expires_at: T + 99,
    refine_status: "processing",
    refine_attempts: 2,
    refine_locked_by: "w2",
    refine_lease_until: LEASE_END,
  },
  {
    id: "ref-completed",
    config: cfg(true),
    state: "completed",
    attempts: 2,
    result: base,
    finished_at: T + 9,
    expires_at: T + 99,
    refine_status: "completed",
    refine_attempts: 1,
    refine_result: refined,
  },
  {
    id: "ref-failed",
    config: cfg(true),
    state: "completed",
    attempts: 1,
    result: base,
    finished_at: T + 9,
    expires_at: T + 99,
    refine_status: "failed",
    refine_attempts: 3,
    refine_error: "refiner_failed",
  },
  {
    id: "ref-enqueue",
    config: cfg(true),
    state: "completed",
    attempts: 1,
    result: base,
    finished_at: T + 9,
    expires_at: T + 99,
    refine_status: "failed",
    refine_error: "refiner_enqueue_failed",
    insight_error: "no insight model is configured",
  },
  {
    id: "pre-002",
    config: cfg(true),
    state: "completed",
    attempts: 1,
    result: base,
    finished_at: T + 9,
    expires_at: T + 99,
  },
  {
    id: "expired",
    state: "completed",
    attempts: 1,
    result: null,
    blob_key: null,
    finished_at: T + 9,
    expires_at: T + 10,
    expired: 1,
  },
  {
    id: "deleted",
    state: "failed",
    attempts: 0,
    error_code: "E500",
    blob_key: null,
    finished_at: T + 3,
    expires_at: T + 3,
    deleted_at: T + 3,
  },
];

const FIELDS = [
  "seq",
  "id",
  "client_id",
  "config",
  "blob_key",
  "file_format",
  "audio_s",
  "result",
  "created_at",
  "expires_at",
  "expired",
  "deleted_at",
  "refine_result",
  "insight_error",
  "state",
  "attempts",
  "max_attempts",
  "progress",
  "error_code",
  "error_message",
  "started_at",
  "finished_at",
  "refine_status",
  "refine_error",
] as const;

function view(row: JobRow | Record<string, unknown>): Record<string, unknown> {
  const r = row as Record<string, unknown>;
  const bodies: Record<string, unknown> = { plain: readResponse(row as JobRow, false) };
  try {
    bodies.refined = readResponse(row as JobRow, true);
  } catch (e) {
    bodies.refined = (e as Error).message;
  }
  return { ...Object.fromEntries(FIELDS.map((f) => [f, r[f] ?? null])), ...bodies };
}

for (const [label, usePg, skip] of [
  ["SQLite", false, false],
  ["PostgreSQL", true, pgSkip ?? false],
] as const) {
  describe(`migration 005 (tasks) on ${label}`, { skip }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-migrate-"));
    const dataDir = path.join(dir, "data");
    let db: PgDatabase | undefined;
    let databaseUrl: string | undefined;
    let before005: Map<string, Record<string, unknown>>;
    let store: Store;

    before(async () => {
      let old: Kysely<any>;
      if (usePg) {
        db = await createPgDatabase("sori_migrate");
        databaseUrl = db.url;
        old = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl }) }) });
      } else {
        fs.mkdirSync(dataDir, { recursive: true });
        old = new Kysely({ dialect: new SqliteDialect({ database: new Sqlite(path.join(dataDir, "sori.db")) }) });
      }
      // The schema as the previous release left it: migrations 001-004, under the names openStore records.
      const dialect = usePg ? "postgres" : "sqlite";
      const migrations: Record<string, Migration> = {};
      for (const [name, mod] of Object.entries({
        "001_initial": m001,
        "002_refinement": m002,
        "003_extras": m003,
        "004_blobs": m004,
      })) {
        migrations[name] = { up: (k) => mod.up(k, dialect) };
      }
      const { error } = await new Migrator({
        db: old,
        provider: { getMigrations: async () => migrations },
      }).migrateToLatest();
      assert.equal(error, undefined);
      await old
        .insertInto("clients")
        .values({ id: "c", name: "c", secret_hash: "scrypt$x", tier: "enterprise", created_at: T })
        .execute();
      for (const row of OLD_ROWS) {
        await old
          .insertInto("jobs")
          .values({
            client_id: "c",
            config: cfg(false),
            blob_key: `blob-${String(row.id)}`,
            file_format: "wav",
            audio_s: 2.5,
            attempts: 0,
            max_attempts: 3,
            run_at: T,
            created_at: T,
            ...row,
          })
          .execute();
      }
      const rows = await old.selectFrom("jobs").selectAll().execute();
      before005 = new Map(rows.map((r) => [String(r.id), view(r as Record<string, unknown>)]));
      await old.destroy();
      store = await openStore({ databaseUrl, dataDir });
    });
    after(async () => {
      await store?.close();
      await db?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("loses nothing: every job reads as before, field by field and in both read bodies", async () => {
      assert.equal(before005.size, OLD_ROWS.length);
      for (const [id, was] of before005) {
        const now = await getJob(store, id);
        assert.ok(now, id);
        assert.deepEqual(view(now), was, id);
      }
    });

    it("gives every job its transcribe task and every recorded refinement its refine task, leases included", async () => {
      const tasks = await store.db.selectFrom("tasks").selectAll().orderBy("seq").execute();
      assert.equal(tasks.filter((t) => t.kind === "transcribe").length, OLD_ROWS.length);
      assert.deepEqual(
        tasks
          .filter((t) => t.kind === "refine")
          .map((t) => t.job_id)
          .sort(),
        ["ref-completed", "ref-enqueue", "ref-failed", "ref-processing", "ref-queued"],
      );
      const running = tasks.find((t) => t.job_id === "running" && t.kind === "transcribe")!;
      assert.deepEqual(
        [running.state, running.locked_by, running.lease_until, running.attempts],
        ["running", "w1", LEASE_END, 1],
      );
      const refining = tasks.find((t) => t.job_id === "ref-processing" && t.kind === "refine")!;
      assert.deepEqual(
        [refining.state, refining.locked_by, refining.lease_until, refining.attempts, refining.max_attempts],
        ["running", "w2", LEASE_END, 2, 3],
      );
      assert.equal(tasks.find((t) => t.job_id === "retrying")!.run_at, T + 2000, "a retry keeps its backoff");
      const cols = (await store.db.introspection.getTables())
        .find((t) => t.name === "jobs")!
        .columns.map((c) => c.name);
      assert.ok(!cols.includes("state") && !cols.includes("refine_status"), cols.join());
    });

    it("the migrated work goes on: old leases fence and reap, queued work is claimed in the old order", async () => {
      const w2Task = await store.db
        .selectFrom("tasks")
        .selectAll()
        .where("job_id", "=", "ref-processing")
        .where("kind", "=", "refine")
        .executeTakeFirstOrThrow();
      assert.equal(
        await completeTask(store, w2Task, "w9", { results: { refine_result: refined } }, 1000, T),
        false,
        "fenced by the old lease holder",
      );
      assert.deepEqual(await reapExpired(store, 1000, LEASE_END + 1), { requeued: 2, failed: 0 });
      const claimed = await claimTasks(store, { workerId: "w3", leaseMs: 1000 }, { n: 10, now: LEASE_END + 2 });
      assert.deepEqual(
        claimed.map((t) => `${t.kind}:${t.job_id}`),
        [
          "transcribe:queued",
          "transcribe:retrying",
          "transcribe:running",
          "refine:ref-queued",
          "refine:ref-processing",
        ],
      );
      const after = await getJob(store, "ref-processing");
      assert.deepEqual([after?.refine_status, after?.refine_attempts], ["processing", 3]);
    });
  });
}
