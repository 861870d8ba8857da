// A client's jobs, newest first with keyset pagination on seq, and deleting one job's audio and results.

import type { Store } from "./db.js";
import { type JobRow, selectJobs, toJobRow } from "./jobs.js";
import type { JobState } from "./schema.js";
import { KINDS } from "./taskKinds.js";

export interface ListQuery {
  clientId: string;
  states?: JobState[] | undefined;
  /** Only jobs with a seq below this (the cursor). */
  beforeSeq?: number | undefined;
  limit: number;
}

export async function listJobs(store: Store, q: ListQuery): Promise<JobRow[]> {
  let query = selectJobs(store.db)
    .where("j.client_id", "=", q.clientId)
    .where("j.deleted_at", "is", null)
    .orderBy("j.seq", "desc")
    .limit(q.limit);
  if (q.states) query = query.where("t.state", "in", q.states);
  if (q.beforeSeq !== undefined) query = query.where("j.seq", "<", q.beforeSeq);
  return (await query.execute()).map((r) => toJobRow(r as Parameters<typeof toJobRow>[0]));
}

/**
 * Marks the job deleted and drops its results (base and refined) now; returns the audio blob key to remove, or
 * undefined when there was no such (undeleted) job. Its tasks still queued or running end as failed with their
 * kind's `cancelled` code, so no worker claims them and a worker that holds one loses its fence (its result is
 * discarded, see completeTask).
 */
export async function deleteJob(
  store: Store,
  id: string,
  now = Date.now(),
): Promise<{ blobKey: string | null } | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom("jobs")
      .select(["blob_key"])
      .where("id", "=", id)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    if (!row) return undefined;
    await trx
      .updateTable("jobs")
      .set({ deleted_at: now, result: null, blob_key: null, refine_result: null })
      .where("id", "=", id)
      .execute();
    await trx.updateTable("tasks").set({ error_message: null }).where("job_id", "=", id).execute();
    const pending = await trx
      .selectFrom("tasks")
      .select("kind")
      .where("job_id", "=", id)
      .where("state", "in", ["queued", "running"])
      .execute();
    // Nothing will continue the job's work: its checkpoints go with it.
    await trx
      .deleteFrom("task_checkpoints")
      .where("task_seq", "in", trx.selectFrom("tasks").select("seq").where("job_id", "=", id))
      .execute();
    for (const { kind } of pending) {
      await trx
        .updateTable("tasks")
        .set({
          state: "failed",
          error_code: KINDS[kind].cancelled.code,
          error_message: KINDS[kind].cancelled.message,
          locked_by: null,
          lease_until: null,
          finished_at: now,
        })
        .where("job_id", "=", id)
        .where("kind", "=", kind)
        .where("state", "in", ["queued", "running"])
        .execute();
      if (KINDS[kind].endsJob) await trx.updateTable("jobs").set({ expires_at: now }).where("id", "=", id).execute();
    }
    return { blobKey: row.blob_key };
  });
}
