// The refinement phase's queue transitions, in the pattern of src/jobs/queue.ts: a completed job whose
// refine_status is queued is claimed in one statement with its own lease (refine_locked_by, refine_lease_until)
// and attempt count; every later write is fenced by refine_locked_by. The base row's state, result and lease are
// never touched here, so the plain read cannot be held back by a refinement.
import type { Store } from "../storage/db.js";
import type { JobRow } from "../storage/jobs.js";

export type RefineErrorCode = "refiner_enqueue_failed" | "refiner_input_unavailable" | "refiner_failed";

export interface RefineLease {
  workerId: string;
  leaseMs: number;
}

/** Claims up to `n` queued refinements, oldest job first. */
export async function claimRefinements(store: Store, lease: RefineLease, n = 1, now = Date.now()): Promise<JobRow[]> {
  let oldest = store.db
    .selectFrom("jobs")
    .select("seq")
    .where("refine_status", "=", "queued")
    .where("state", "=", "completed")
    .where("expired", "=", 0)
    .orderBy("seq")
    .limit(n);
  if (store.dialect === "postgres") oldest = oldest.forUpdate().skipLocked();
  const rows = await store.db
    .updateTable("jobs")
    .set((eb) => ({
      refine_status: "processing",
      refine_locked_by: lease.workerId,
      refine_lease_until: now + lease.leaseMs,
      refine_attempts: eb(eb.fn.coalesce("refine_attempts", eb.lit(0)), "+", 1),
    }))
    .where("seq", "in", oldest)
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.seq - b.seq);
}

export async function renewRefineLease(store: Store, jobId: string, lease: RefineLease): Promise<boolean> {
  const r = await store.db
    .updateTable("jobs")
    .set({ refine_lease_until: Date.now() + lease.leaseMs })
    .where("id", "=", jobId)
    .where("refine_locked_by", "=", lease.workerId)
    .where("refine_status", "=", "processing")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function completeRefinement(store: Store, jobId: string, workerId: string, result: unknown): Promise<boolean> {
  const r = await store.db
    .updateTable("jobs")
    .set({ refine_status: "completed", refine_result: JSON.stringify(result), refine_locked_by: null, refine_lease_until: null })
    .where("id", "=", jobId)
    .where("refine_locked_by", "=", workerId)
    .where("refine_status", "=", "processing")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Fails the refinement for good, or queues it again while attempts remain and the failure may pass. */
export async function failRefinement(
  store: Store,
  job: Pick<JobRow, "id" | "refine_attempts" | "max_attempts">,
  workerId: string,
  code: RefineErrorCode,
  retryable: boolean,
): Promise<"retried" | "failed" | "lost"> {
  const retry = retryable && (job.refine_attempts ?? 0) < job.max_attempts;
  const r = await store.db
    .updateTable("jobs")
    .set(
      retry
        ? { refine_status: "queued", refine_locked_by: null, refine_lease_until: null }
        : { refine_status: "failed", refine_error: code, refine_locked_by: null, refine_lease_until: null },
    )
    .where("id", "=", job.id)
    .where("refine_locked_by", "=", workerId)
    .where("refine_status", "=", "processing")
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return "lost";
  return retry ? "retried" : "failed";
}

/** Hands a claimed refinement back untouched (graceful shutdown), giving back the attempt it used. */
export async function releaseRefinement(store: Store, jobId: string, workerId: string): Promise<void> {
  await store.db
    .updateTable("jobs")
    .set((eb) => ({
      refine_status: "queued",
      refine_locked_by: null,
      refine_lease_until: null,
      refine_attempts: eb(eb.fn.coalesce("refine_attempts", eb.lit(0)), "-", 1),
    }))
    .where("id", "=", jobId)
    .where("refine_locked_by", "=", workerId)
    .where("refine_status", "=", "processing")
    .execute();
}

/** Refinements whose worker died go back to the queue, or fail with refiner_failed once attempts are used up. */
export async function reapRefinements(store: Store, now = Date.now()): Promise<{ requeued: number; failed: number }> {
  const requeued = await store.db
    .updateTable("jobs")
    .set({ refine_status: "queued", refine_locked_by: null, refine_lease_until: null })
    .where("refine_status", "=", "processing")
    .where("refine_lease_until", "<", now)
    .whereRef("refine_attempts", "<", "max_attempts")
    .executeTakeFirst();
  const failed = await store.db
    .updateTable("jobs")
    .set({ refine_status: "failed", refine_error: "refiner_failed", refine_locked_by: null, refine_lease_until: null })
    .where("refine_status", "=", "processing")
    .where("refine_lease_until", "<", now)
    .whereRef("refine_attempts", ">=", "max_attempts")
    .executeTakeFirst();
  return { requeued: Number(requeued.numUpdatedRows), failed: Number(failed.numUpdatedRows) };
}
