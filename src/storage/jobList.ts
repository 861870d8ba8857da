// A client's jobs, newest first with keyset pagination on seq, and deleting one job's audio and results.
import type { Store } from "./db.js";
import type { JobRow } from "./jobs.js";
import type { JobState } from "./schema.js";

export interface ListQuery {
  clientId: string;
  states?: JobState[] | undefined;
  /** Only jobs with a seq below this (the cursor). */
  beforeSeq?: number | undefined;
  limit: number;
}

export async function listJobs(store: Store, q: ListQuery): Promise<JobRow[]> {
  let query = store.db
    .selectFrom("jobs")
    .selectAll()
    .where("client_id", "=", q.clientId)
    .where("deleted_at", "is", null)
    .orderBy("seq", "desc")
    .limit(q.limit);
  if (q.states) query = query.where("state", "in", q.states);
  if (q.beforeSeq !== undefined) query = query.where("seq", "<", q.beforeSeq);
  return query.execute();
}

/**
 * Marks the job deleted and drops its results (base and refined) now; returns the audio blob key to remove, or
 * undefined when there was no such (undeleted) job. A job still queued or running is ended as failed, so no worker
 * claims it and a worker that holds it loses its fence (its result is discarded, see completeJob); the same for a
 * refinement still queued or running.
 */
export async function deleteJob(store: Store, id: string, now = Date.now()): Promise<{ blobKey: string | null } | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("jobs").select(["blob_key"]).where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst();
    if (!row) return undefined;
    await trx
      .updateTable("jobs")
      .set({ deleted_at: now, result: null, blob_key: null, error_message: null, refine_result: null })
      .where("id", "=", id)
      .execute();
    // A refinement not yet final is ended too; its runner is fenced out like a base worker.
    await trx
      .updateTable("jobs")
      .set({ refine_status: "failed", refine_error: "refiner_input_unavailable", refine_locked_by: null, refine_lease_until: null })
      .where("id", "=", id)
      .where("refine_status", "in", ["queued", "processing"])
      .execute();
    await trx
      .updateTable("jobs")
      .set({ state: "failed", error_code: "E500", locked_by: null, lease_until: null, finished_at: now, expires_at: now })
      .where("id", "=", id)
      .where("state", "in", ["queued", "running"])
      .execute();
    return { blobKey: row.blob_key };
  });
}
