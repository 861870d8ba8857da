// Job records: creation at submit (with the job's transcribe task), reads for the API, and the aggregates the
// submit limits need. Every write to `tasks` (the task created here included) is in src/storage/tasks.ts.
import { type Kysely, sql } from "kysely";
import type { Store } from "./db.js";
import type { Database, JobState, JobsTable, RefineStatus, TaskState } from "./schema.js";
import { addTask } from "./tasks.js";

/**
 * A job as the API reads it: its record plus where its tasks stand. `state` and the attempt, progress, error and
 * timing fields are its transcribe task's; `refine_*` its refine task's (null when it has none).
 */
export type JobRow = Omit<JobsTable, "seq"> & {
  seq: number;
  state: JobState;
  attempts: number;
  max_attempts: number;
  progress: number;
  error_code: string | null;
  error_message: string | null;
  started_at: number | null;
  finished_at: number | null;
  refine_status: RefineStatus | null;
  refine_error: string | null;
  refine_attempts: number | null;
};

export interface NewJob {
  id: string;
  client_id: string;
  config: string;
  blob_key: string;
  file_format: string;
  audio_s: number | null;
  max_attempts: number;
}

/**
 * The admission limits, checked again inside the transaction that inserts the job: `check` is given what the client
 * already has in flight and the audio seconds it submitted since `since`, and throws to refuse. On PostgreSQL the
 * transaction first takes an advisory lock of the client, so two API hosts admitting jobs of one client at once
 * take turns and cannot both pass a bound that leaves room for one. (SQLite has one writer: its transactions take
 * turns anyway.)
 */
export interface Admission {
  since: number;
  check(used: { inFlight: number; audioS: number }): void;
}

/** The job row and its queued transcribe task, in one transaction (after `admission`'s check, when given). */
export async function insertJob(store: Store, j: NewJob, now = Date.now(), admission?: Admission): Promise<void> {
  const { max_attempts, ...job } = j;
  await store.db.transaction().execute(async (trx) => {
    if (admission) {
      if (store.dialect === "postgres") {
        await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`sori-admit:${j.client_id}`}, 0))`.execute(trx);
      }
      admission.check({
        inFlight: await countInFlightIn(trx, j.client_id),
        audioS: await audioSecondsSinceIn(trx, j.client_id, admission.since),
      });
    }
    await trx
      .insertInto("jobs")
      .values({ ...job, created_at: now, expired: 0 })
      .execute();
    await addTask(trx, { job_id: j.id, kind: "transcribe", max_attempts }, now);
  });
}

/** The select behind every JobRow: the job joined with its transcribe task and, where there is one, its refine task. */
export function selectJobs(db: Kysely<Database>) {
  return db
    .selectFrom("jobs as j")
    .innerJoin("tasks as t", (join) => join.onRef("t.job_id", "=", "j.id").on("t.kind", "=", "transcribe"))
    .leftJoin("tasks as r", (join) => join.onRef("r.job_id", "=", "j.id").on("r.kind", "=", "refine"))
    .selectAll("j")
    .select([
      "t.state",
      "t.attempts",
      "t.max_attempts",
      "t.progress",
      "t.error_code",
      "t.error_message",
      "t.started_at",
      "t.finished_at",
      "r.state as refine_state",
      "r.error_code as refine_error",
      "r.attempts as refine_attempts",
    ]);
}

type JoinedRow = Omit<JobRow, "refine_status"> & { refine_state: TaskState | null };

/** The spec's refine_status from the refine task's state. */
export function toJobRow({ refine_state, ...row }: JoinedRow): JobRow {
  return { ...row, refine_status: refine_state === "running" ? "processing" : refine_state };
}

export async function getJob(store: Store, id: string): Promise<JobRow | undefined> {
  const row = await selectJobs(store.db).where("j.id", "=", id).executeTakeFirst();
  return row && toJobRow(row as JoinedRow);
}

/** Jobs of a client that are not final yet (queued or running): the concurrency bound counts these. */
export const countInFlight = (store: Store, clientId: string): Promise<number> => countInFlightIn(store.db, clientId);

async function countInFlightIn(db: Kysely<Database>, clientId: string): Promise<number> {
  const r = await db
    .selectFrom("jobs as j")
    .innerJoin("tasks as t", (join) => join.onRef("t.job_id", "=", "j.id").on("t.kind", "=", "transcribe"))
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("j.client_id", "=", clientId)
    .where("t.state", "in", ["queued", "running"])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Whether any task of the job is queued or running (its audio must be kept for it). */
export async function hasPendingTasks(store: Store, jobId: string): Promise<boolean> {
  const row = await store.db
    .selectFrom("tasks")
    .select("seq")
    .where("job_id", "=", jobId)
    .where("state", "in", ["queued", "running"])
    .executeTakeFirst();
  return row !== undefined;
}

/** Audio seconds a client submitted or streamed since `since` (epoch ms): the usage quota counts these. */
export const audioSecondsSince = (store: Store, clientId: string, since: number): Promise<number> =>
  audioSecondsSinceIn(store.db, clientId, since);

async function audioSecondsSinceIn(db: Kysely<Database>, clientId: string, since: number): Promise<number> {
  const jobs = await db
    .selectFrom("jobs")
    .select((eb) => eb.fn.sum<number | null>("audio_s").as("s"))
    .where("client_id", "=", clientId)
    .where("created_at", ">=", since)
    .executeTakeFirstOrThrow();
  const streamed = await db
    .selectFrom("stream_usage")
    .select((eb) => eb.fn.sum<number | null>("audio_s").as("s"))
    .where("client_id", "=", clientId)
    .where("ended_at", ">=", since)
    .executeTakeFirstOrThrow();
  return Number(jobs.s ?? 0) + Number(streamed.s ?? 0);
}
