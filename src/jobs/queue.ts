// The one lifecycle of every task kind (src/storage/taskKinds.ts), each transition one fenced statement or
// transaction. The pattern is graphile-worker's: claim the oldest available rows and lease them in the same
// statement (attempt counted at claim time); every later write is fenced by `locked_by`, so a worker that lost its
// lease changes nothing. A failed attempt that may pass is retried with backoff; a dead worker's task is reaped.
import { sql } from "kysely";
import { dropCheckpoints } from "../storage/checkpoints.js";
import type { Store } from "../storage/db.js";
import type { TaskRow } from "../storage/jobs.js";
import type { TaskKind } from "../storage/schema.js";
import { backoffMs, KINDS, TASK_KINDS } from "../storage/taskKinds.js";
import type { TaskFailure } from "./failure.js";

export interface Lease {
  workerId: string;
  leaseMs: number;
}

/** The task a transition is about: its row id, and what the transition needs to know of it. */
export type TaskRef = Pick<TaskRow, "seq" | "job_id" | "kind">;

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
    .where("seq", "=", task.seq)
    .where("locked_by", "=", lease.workerId)
    .where("state", "=", "running")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** What a completed task produced, written in the same transaction as the completion. */
export interface TaskCompletion {
  /** The task's results on its job's row. */
  results?: { result?: string; refine_result?: string; insight_error?: string | null };
  /** A task that follows this one: queued, or already failed (refiner_enqueue_failed: docs/enterprise.md), so that
   * a completed job never lacks its refine_status. */
  next?: { kind: TaskKind; failed?: { code: string; message: string | null } };
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
      .set({ state: "completed", progress: 1, locked_by: null, lease_until: null, finished_at: now })
      .where("seq", "=", task.seq)
      .where("locked_by", "=", workerId)
      .where("state", "=", "running")
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await dropCheckpoints(trx, [task.seq]);
    const job = { ...done.results, ...(KINDS[task.kind].endsJob ? { expires_at: now + retentionMs } : {}) };
    if (Object.keys(job).length > 0) await trx.updateTable("jobs").set(job).where("id", "=", task.job_id).execute();
    if (done.next) {
      const failed = done.next.failed;
      await trx
        .insertInto("tasks")
        .values({
          job_id: task.job_id,
          kind: done.next.kind,
          priority: KINDS[done.next.kind].priority,
          state: failed ? "failed" : "queued",
          attempts: 0,
          max_attempts: task.max_attempts,
          run_at: now,
          progress: 0,
          error_code: failed?.code ?? null,
          error_message: failed?.message ?? null,
          created_at: now,
          finished_at: failed ? now : null,
        })
        .execute();
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
  f: TaskFailure,
  retentionMs: number,
  now = Date.now(),
): Promise<"retried" | "failed" | "lost"> {
  const retry = f.retryable && task.attempts < task.max_attempts;
  return store.db.transaction().execute(async (trx) => {
    const q = trx.updateTable("tasks");
    const set = retry
      ? q.set({ state: "queued", locked_by: null, lease_until: null, run_at: now + backoffMs(task.attempts) })
      : q.set({
          state: "failed",
          error_code: f.code,
          error_message: f.message,
          locked_by: null,
          lease_until: null,
          finished_at: now,
        });
    const r = await set
      .where("seq", "=", task.seq)
      .where("locked_by", "=", workerId)
      .where("state", "=", "running")
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return "lost";
    // A retry continues from the checkpoints (an engine crash, a timeout); a final failure has no use for them.
    if (retry) return "retried";
    await dropCheckpoints(trx, [task.seq]);
    if (KINDS[task.kind].endsJob)
      await trx
        .updateTable("jobs")
        .set({ expires_at: now + retentionMs })
        .where("id", "=", task.job_id)
        .execute();
    return "failed";
  });
}

/** Hands a claimed task back (graceful shutdown): the attempt it used is given back too, and its checkpoints stay,
 * so the next worker continues from the last one (docs/architecture.md, "Checkpoints"). */
export async function releaseTask(store: Store, task: Pick<TaskRow, "seq">, workerId: string): Promise<void> {
  await store.db
    .updateTable("tasks")
    .set((eb) => ({ state: "queued", locked_by: null, lease_until: null, attempts: eb("attempts", "-", 1) }))
    .where("seq", "=", task.seq)
    .where("locked_by", "=", workerId)
    .where("state", "=", "running")
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
    .set({ state: "queued", locked_by: null, lease_until: null, run_at: now })
    .where("state", "=", "running")
    .where("lease_until", "<", now)
    .whereRef("attempts", "<", "max_attempts")
    .executeTakeFirst();
  let failed = 0;
  for (const kind of TASK_KINDS) {
    const { code, message } = KINDS[kind].exhausted;
    failed += await store.db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable("tasks")
        .set({
          state: "failed",
          error_code: code,
          error_message: message,
          locked_by: null,
          lease_until: null,
          finished_at: now,
        })
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
      if (rows.length > 0 && KINDS[kind].endsJob) {
        await trx
          .updateTable("jobs")
          .set({ expires_at: now + retentionMs })
          .where(
            "id",
            "in",
            rows.map((r) => r.job_id),
          )
          .execute();
      }
      return rows.length;
    });
  }
  return { requeued: Number(requeued.numUpdatedRows), failed };
}
