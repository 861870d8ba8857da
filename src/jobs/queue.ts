// Queue transitions, each one statement. The pattern is graphile-worker's: claim the oldest available rows and
// lease them in the same statement (attempt counted at claim time); every later write is fenced by
// `locked_by`, so a worker that lost its lease changes nothing.
import { sql } from "kysely";
import type { Store } from "../storage/db.js";
import type { JobRow } from "../storage/jobs.js";

export interface Lease {
  workerId: string;
  leaseMs: number;
}

/** Claims up to `n` queued jobs in submission order. */
export async function claimJobs(store: Store, lease: Lease, n = 1, now = Date.now()): Promise<JobRow[]> {
  let oldest = store.db
    .selectFrom("jobs")
    .select("seq")
    .where("state", "=", "queued")
    .where("run_at", "<=", now)
    .orderBy("seq")
    .limit(n);
  // PostgreSQL: concurrent claimers skip each other's rows instead of waiting. SQLite has a single writer, so
  // the UPDATE below is atomic as it stands.
  if (store.dialect === "postgres") oldest = oldest.forUpdate().skipLocked();
  const rows = await store.db
    .updateTable("jobs")
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
  return rows.sort((a, b) => a.seq - b.seq);
}

/** Extends the lease; false means the job is no longer ours (reaped and re-claimed, or finished). */
export async function renewLease(store: Store, jobId: string, lease: Lease, progress?: number): Promise<boolean> {
  const r = await store.db
    .updateTable("jobs")
    .set({ lease_until: Date.now() + lease.leaseMs, ...(progress === undefined ? {} : { progress }) })
    .where("id", "=", jobId)
    .where("locked_by", "=", lease.workerId)
    .where("state", "=", "running")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Set in the same statement as the completion (docs/enterprise.md): the refinement phase starts queued (or
 * failed with refiner_enqueue_failed), so a completed job never lacks its refine_status. */
export interface CompletionAddons {
  refine_status?: "queued" | "failed";
  refine_error?: "refiner_enqueue_failed";
  insight_error?: string | null;
}

export async function completeJob(
  store: Store,
  jobId: string,
  workerId: string,
  result: unknown,
  retentionMs: number,
  now = Date.now(),
  addons: CompletionAddons = {},
): Promise<boolean> {
  const r = await store.db
    .updateTable("jobs")
    .set({
      state: "completed",
      result: JSON.stringify(result),
      progress: 1,
      locked_by: null,
      lease_until: null,
      finished_at: now,
      expires_at: now + retentionMs,
      ...addons,
    })
    .where("id", "=", jobId)
    .where("locked_by", "=", workerId)
    .where("state", "=", "running")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export interface JobFailure {
  code: string;
  message: string;
  /** A retryable failure goes back to the queue while attempts remain. */
  retryable: boolean;
}

/** Fails the job for good, or puts it back in the queue (same seq, so it keeps its place) when it may retry. */
export async function failJob(
  store: Store,
  job: Pick<JobRow, "id" | "attempts" | "max_attempts">,
  workerId: string,
  f: JobFailure,
  retentionMs: number,
  now = Date.now(),
): Promise<"retried" | "failed" | "lost"> {
  const retry = f.retryable && job.attempts < job.max_attempts;
  const q = store.db.updateTable("jobs");
  const set = retry
    ? q.set({ state: "queued", locked_by: null, lease_until: null, run_at: now + backoffMs(job.attempts) })
    : q.set({
        state: "failed",
        error_code: f.code,
        error_message: f.message,
        locked_by: null,
        lease_until: null,
        finished_at: now,
        expires_at: now + retentionMs,
      });
  const r = await set
    .where("id", "=", job.id)
    .where("locked_by", "=", workerId)
    .where("state", "=", "running")
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return "lost";
  return retry ? "retried" : "failed";
}

/** Hands a claimed job back untouched (graceful shutdown): the attempt it used is given back too. */
export async function releaseJob(store: Store, jobId: string, workerId: string): Promise<void> {
  await store.db
    .updateTable("jobs")
    .set((eb) => ({ state: "queued", locked_by: null, lease_until: null, attempts: eb("attempts", "-", 1) }))
    .where("id", "=", jobId)
    .where("locked_by", "=", workerId)
    .where("state", "=", "running")
    .execute();
}

/**
 * Jobs whose worker died (lease expired) go back to the queue, or fail with E500 once their attempts are used up,
 * so that no accepted job is ever stuck. Returns how many rows were requeued and failed.
 */
export async function reapExpired(
  store: Store,
  retentionMs: number,
  now = Date.now(),
): Promise<{ requeued: number; failed: number }> {
  const requeued = await store.db
    .updateTable("jobs")
    .set({ state: "queued", locked_by: null, lease_until: null, run_at: now })
    .where("state", "=", "running")
    .where("lease_until", "<", now)
    .whereRef("attempts", "<", "max_attempts")
    .executeTakeFirst();
  const failed = await store.db
    .updateTable("jobs")
    .set({
      state: "failed",
      error_code: "E500",
      error_message: "the worker processing this job stopped responding too many times",
      locked_by: null,
      lease_until: null,
      finished_at: now,
      expires_at: now + retentionMs,
    })
    .where("state", "=", "running")
    .where("lease_until", "<", now)
    .whereRef("attempts", ">=", "max_attempts")
    .executeTakeFirst();
  return { requeued: Number(requeued.numUpdatedRows), failed: Number(failed.numUpdatedRows) };
}

const backoffMs = (attempts: number): number => Math.min(60_000, 1000 * 2 ** (attempts - 1));
