// Every write to `tasks`, in one module (as graphile-worker keeps its statements in src/sql/): the task created with
// its job, the one lifecycle of every kind (src/storage/taskKinds.ts) and the cancel of a deleted job's work. Claim
// takes the oldest available rows and leases them in the same statement (the attempt is counted at claim time); every
// later write by a worker is `fenced` by its lease, so a worker that lost the lease changes nothing. A failed attempt
// that may pass is retried with backoff; a dead worker's task is reaped.
import { type ExpressionBuilder, type Insertable, type Kysely, sql } from "kysely";
import type { TaskFailureCode } from "../errors.js";
import type { Store } from "./db.js";
import type { Database, TaskKind, TasksTable } from "./schema.js";
import { backoffMs, KINDS, TASK_KINDS } from "./taskKinds.js";

export type TaskRow = Omit<TasksTable, "seq"> & { seq: number };

export interface Lease {
  workerId: string;
  leaseMs: number;
}

/** The task a transition is about: its row id, and what the transition needs to know of it. */
export type TaskRef = Pick<TaskRow, "seq" | "job_id" | "kind">;

/** A failed attempt as the store records it (src/jobs/failure.ts decides what an error becomes). */
export interface AttemptFailure {
  code: TaskFailureCode;
  message: string;
  /** A retryable failure goes back to the queue (after a backoff) while attempts remain. */
  retryable: boolean;
}

/** What a completed task produced, written in the same transaction as the completion. */
export interface TaskCompletion {
  /** The task's results on its job's row. */
  results?: { result?: string; refine_result?: string; insight_error?: string | null; redacted_blob_key?: string };
  /** A task that follows this one: queued, or already failed (refiner_enqueue_failed: docs/enterprise.md), so that
   * a completed job never lacks its refine_status. */
  next?: { kind: TaskKind; failed?: { code: string; message: string | null } };
}

/** A task to create: queued, or already failed with `failed`'s error. */
export interface NewTask {
  job_id: string;
  kind: TaskKind;
  max_attempts: number;
  failed?: { code: string; message: string | null } | undefined;
}

/**
 * The condition of every write by the worker holding a task: the task is still running under this worker's lease.
 * A worker that lost it (reaped and claimed again, cancelled, finished) matches no row, so it writes nothing.
 */
export const fenced = (eb: ExpressionBuilder<Database, "tasks">, seq: number, workerId: string) =>
  eb.and([eb("seq", "=", seq), eb("locked_by", "=", workerId), eb("state", "=", "running")]);

/** The one row builder: a new task of its kind, with no attempt and no lease. */
const taskRow = (t: NewTask, now: number): Insertable<TasksTable> => ({
  job_id: t.job_id,
  kind: t.kind,
  priority: KINDS[t.kind].priority,
  state: t.failed ? "failed" : "queued",
  attempts: 0,
  max_attempts: t.max_attempts,
  run_at: now,
  progress: 0,
  error_code: t.failed?.code ?? null,
  error_message: t.failed?.message ?? null,
  created_at: now,
  finished_at: t.failed ? now : null,
});

/** The lease fields of a task no worker holds. */
const UNLEASED = { locked_by: null, lease_until: null } as const;

/** A task ended for good with an error. */
const failedAt = (error: { code: string; message: string | null }, now: number) =>
  ({ state: "failed", error_code: error.code, error_message: error.message, ...UNLEASED, finished_at: now }) as const;

/** Creates a task (with its job at submit, or after the task it follows, in that transaction). */
export async function addTask(db: Kysely<Database>, t: NewTask, now: number): Promise<void> {
  await db.insertInto("tasks").values(taskRow(t, now)).execute();
}

/**
 * The job side of tasks that ended: `results` go on their jobs' rows and, when their kind ends the job, its retention
 * starts (the results are kept until `expiresAt`).
 */
async function endJobs(
  db: Kysely<Database>,
  kind: TaskKind,
  jobIds: string[],
  expiresAt: number,
  results: TaskCompletion["results"] = {},
): Promise<void> {
  const set = { ...results, ...(KINDS[kind].endsJob ? { expires_at: expiresAt } : {}) };
  if (jobIds.length === 0 || Object.keys(set).length === 0) return;
  await db.updateTable("jobs").set(set).where("id", "in", jobIds).execute();
}

/** Drops tasks' checkpoints: they ended, and their result (or error) is all that counts now. */
async function dropCheckpoints(db: Kysely<Database>, taskSeqs: number[]): Promise<void> {
  if (taskSeqs.length === 0) return;
  await db.deleteFrom("task_checkpoints").where("task_seq", "in", taskSeqs).execute();
}

/** Claims up to `n` queued tasks of the given kinds: lowest priority first, then oldest. */
export async function claimTasks(
  store: Store,
  lease: Lease,
  opts: { kinds?: readonly TaskKind[]; n?: number; now?: number } = {},
): Promise<TaskRow[]> {
  const now = opts.now ?? Date.now();
  const kinds = opts.kinds ?? TASK_KINDS;
  if (kinds.length === 0) return [];
  let oldest = store.db
    .selectFrom("tasks")
    .select("seq")
    .where("state", "=", "queued")
    .where("run_at", "<=", now)
    .where("kind", "in", kinds)
    // A job whose results expired has nothing left to work on.
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("jobs")
            .select("jobs.id")
            .whereRef("jobs.id", "=", "tasks.job_id")
            .where("jobs.expired", "=", 1),
        ),
      ),
    )
    .orderBy("priority")
    .orderBy("seq")
    .limit(opts.n ?? 1);
  // PostgreSQL: concurrent claimers skip each other's rows instead of waiting. SQLite has a single writer, so
  // the UPDATE below is atomic as it stands.
  if (store.dialect === "postgres") oldest = oldest.forUpdate().skipLocked();
  const rows = await store.db
    .updateTable("tasks")
    .set((eb) => ({
      state: "running",
      locked_by: lease.workerId,
      lease_until: now + lease.leaseMs,
      attempts: eb("attempts", "+", 1),
      started_at: eb.fn.coalesce("started_at", sql.lit(now)),
    }))
    .where("seq", "in", oldest)
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.priority - b.priority || a.seq - b.seq);
}

/** Extends the lease; false means the task is no longer ours (reaped and re-claimed, cancelled, or finished). */
export async function renewLease(
  store: Store,
  task: Pick<TaskRow, "seq">,
  lease: Lease,
  progress?: number,
): Promise<boolean> {
  const r = await store.db
    .updateTable("tasks")
    .set({ lease_until: Date.now() + lease.leaseMs, ...(progress === undefined ? {} : { progress }) })
    .where((eb) => fenced(eb, task.seq, lease.workerId))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Completes the task if it is still ours; false (and nothing written) when the lease was lost. */
export async function completeTask(
  store: Store,
  task: TaskRef & Pick<TaskRow, "max_attempts">,
  workerId: string,
  done: TaskCompletion,
  retentionMs: number,
  now = Date.now(),
): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable("tasks")
      .set({ state: "completed", progress: 1, ...UNLEASED, finished_at: now })
      .where((eb) => fenced(eb, task.seq, workerId))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await dropCheckpoints(trx, [task.seq]);
    await endJobs(trx, task.kind, [task.job_id], now + retentionMs, done.results);
    if (done.next) {
      const { kind, failed } = done.next;
      await addTask(trx, { job_id: task.job_id, kind, max_attempts: task.max_attempts, failed }, now);
    }
    return true;
  });
}

/** Fails the task for good, or puts it back in the queue after a backoff (same seq, so it keeps its place) when
 * it may retry and attempts remain. */
export async function failTask(
  store: Store,
  task: TaskRef & Pick<TaskRow, "attempts" | "max_attempts">,
  workerId: string,
  f: AttemptFailure,
  retentionMs: number,
  now = Date.now(),
): Promise<"retried" | "failed" | "lost"> {
  const retry = f.retryable && task.attempts < task.max_attempts;
  return store.db.transaction().execute(async (trx) => {
    const q = trx.updateTable("tasks");
    const set = retry
      ? q.set({ state: "queued", ...UNLEASED, run_at: now + backoffMs(task.attempts) })
      : q.set(failedAt(f, now));
    const r = await set.where((eb) => fenced(eb, task.seq, workerId)).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return "lost";
    // A retry continues from the checkpoints (an engine crash, a timeout); a final failure has no use for them.
    if (retry) return "retried";
    await dropCheckpoints(trx, [task.seq]);
    await endJobs(trx, task.kind, [task.job_id], now + retentionMs);
    return "failed";
  });
}

/** Hands a claimed task back (graceful shutdown): the attempt it used is given back too, and its checkpoints stay,
 * so the next worker continues from the last one (docs/architecture.md, "Checkpoints"). */
export async function releaseTask(store: Store, task: Pick<TaskRow, "seq">, workerId: string): Promise<void> {
  await store.db
    .updateTable("tasks")
    .set((eb) => ({ state: "queued", ...UNLEASED, attempts: eb("attempts", "-", 1) }))
    .where((eb) => fenced(eb, task.seq, workerId))
    .execute();
}

/**
 * Tasks whose worker died (lease expired) go back to the queue, or fail with their kind's `exhausted` error once
 * their attempts are used up, so that no accepted work is ever stuck. Returns how many were requeued and failed.
 */
export async function reapExpired(
  store: Store,
  retentionMs: number,
  now = Date.now(),
): Promise<{ requeued: number; failed: number }> {
  const requeued = await store.db
    .updateTable("tasks")
    .set({ state: "queued", ...UNLEASED, run_at: now })
    .where("state", "=", "running")
    .where("lease_until", "<", now)
    .whereRef("attempts", "<", "max_attempts")
    .executeTakeFirst();
  let failed = 0;
  for (const kind of TASK_KINDS) {
    failed += await store.db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable("tasks")
        .set(failedAt(KINDS[kind].exhausted, now))
        .where("kind", "=", kind)
        .where("state", "=", "running")
        .where("lease_until", "<", now)
        .whereRef("attempts", ">=", "max_attempts")
        .returning(["job_id", "seq"])
        .execute();
      await dropCheckpoints(
        trx,
        rows.map((r) => r.seq),
      );
      await endJobs(
        trx,
        kind,
        rows.map((r) => r.job_id),
        now + retentionMs,
      );
      return rows.length;
    });
  }
  return { requeued: Number(requeued.numUpdatedRows), failed };
}

/**
 * The tasks' side of deleting a job, in its transaction: their error messages go with its results, their checkpoints
 * go, and those still queued or running end as failed with their kind's `cancelled` code, so no worker claims them
 * and a worker that holds one loses its fence (its result is discarded, see completeTask).
 */
export async function cancelTasks(db: Kysely<Database>, jobId: string, now: number): Promise<void> {
  await db.updateTable("tasks").set({ error_message: null }).where("job_id", "=", jobId).execute();
  const pending = await db
    .selectFrom("tasks")
    .select("kind")
    .where("job_id", "=", jobId)
    .where("state", "in", ["queued", "running"])
    .execute();
  // Nothing will continue the job's work: its checkpoints go with it.
  await db
    .deleteFrom("task_checkpoints")
    .where("task_seq", "in", db.selectFrom("tasks").select("seq").where("job_id", "=", jobId))
    .execute();
  for (const { kind } of pending) {
    await db
      .updateTable("tasks")
      .set(failedAt(KINDS[kind].cancelled, now))
      .where("job_id", "=", jobId)
      .where("kind", "=", kind)
      .where("state", "in", ["queued", "running"])
      .execute();
    // The job is gone now: its retention ends at once.
    await endJobs(db, kind, [jobId], now);
  }
}
