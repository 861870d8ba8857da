import { type Kysely, sql } from "kysely";

// Work kinds (docs/architecture.md, "Tasks"): the base transcription and the refinement phase were two lifecycles
// on the jobs row (state/locked_by/... and refine_status/refine_locked_by/...). Each becomes a row of `tasks` with
// one shared lifecycle; every job gets its transcribe task and, where refinement was recorded, its refine task,
// with the state, attempts, lease and error it had. Then the old columns go.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  let tasks = db.schema.createTable("tasks");
  tasks =
    dialect === "postgres"
      ? tasks.addColumn("seq", "bigserial", (c) => c.primaryKey())
      : tasks.addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement());
  await tasks
    .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("priority", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("max_attempts", "integer", (c) => c.notNull())
    .addColumn("run_at", big, (c) => c.notNull())
    .addColumn("locked_by", "text")
    .addColumn("lease_until", big)
    .addColumn("progress", "double precision", (c) => c.notNull().defaultTo(0))
    .addColumn("error_code", "text")
    .addColumn("error_message", "text")
    .addColumn("created_at", big, (c) => c.notNull())
    .addColumn("started_at", big)
    .addColumn("finished_at", big)
    .execute();

  // Transcriptions first, in submission order, so that their claim order is the jobs' order as before.
  await sql`
    INSERT INTO tasks (job_id, kind, priority, state, attempts, max_attempts, run_at, locked_by, lease_until, progress,
                       error_code, error_message, created_at, started_at, finished_at)
    SELECT id, 'transcribe', 0, state, attempts, max_attempts, run_at, locked_by, lease_until, progress,
           error_code, error_message, created_at, started_at, finished_at
    FROM jobs ORDER BY seq`.execute(db);
  // A refinement started when its job completed; its old status `processing` is the task state `running`.
  await sql`
    INSERT INTO tasks (job_id, kind, priority, state, attempts, max_attempts, run_at, locked_by, lease_until, progress,
                       error_code, error_message, created_at, started_at, finished_at)
    SELECT id, 'refine', 1, CASE refine_status WHEN 'processing' THEN 'running' ELSE refine_status END,
           COALESCE(refine_attempts, 0), max_attempts, COALESCE(finished_at, created_at), refine_locked_by,
           refine_lease_until, 0, refine_error, NULL, COALESCE(finished_at, created_at), NULL,
           CASE WHEN refine_status IN ('completed', 'failed') THEN finished_at END
    FROM jobs WHERE refine_status IS NOT NULL ORDER BY seq`.execute(db);

  // Claims scan queued tasks by (priority, seq); the reaper scans running ones; a job has one task per kind.
  await db.schema.createIndex("tasks_state_priority_seq").on("tasks").columns(["state", "priority", "seq"]).execute();
  await db.schema.createIndex("tasks_job_kind").on("tasks").columns(["job_id", "kind"]).unique().execute();

  // SQLite drops a column only once no index names it.
  for (const index of ["jobs_state_seq", "jobs_client_state", "jobs_refine_status_seq"]) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
  const moved = [
    "state",
    "attempts",
    "max_attempts",
    "run_at",
    "locked_by",
    "lease_until",
    "progress",
    "error_code",
    "error_message",
    "started_at",
    "finished_at",
    "refine_status",
    "refine_error",
    "refine_locked_by",
    "refine_lease_until",
    "refine_attempts",
  ];
  for (const column of moved) await db.schema.alterTable("jobs").dropColumn(column).execute();
}
