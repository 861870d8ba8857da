// A client's jobs, newest first with keyset pagination on seq, and deleting one job's audio and results.

import type { Store } from "./db.js";
import { type JobRow, selectJobs, toJobRow } from "./jobs.js";
import type { JobState } from "./schema.js";
import { cancelTasks } from "./tasks.js";

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
 * Marks the job deleted and drops its results (base and refined) now; returns the blob keys to remove (its audio,
 * its redacted copy of the audio), or undefined when there was no such (undeleted) job. Its tasks still queued or running end as failed (cancelTasks),
 * so no worker claims them and a worker that holds one loses its fence.
 */
export async function deleteJob(
  store: Store,
  id: string,
  now = Date.now(),
): Promise<{ blobKey: string | null; redactedKey: string | null } | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom("jobs")
      .select(["blob_key", "redacted_blob_key"])
      .where("id", "=", id)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    if (!row) return undefined;
    await trx
      .updateTable("jobs")
      .set({ deleted_at: now, result: null, blob_key: null, refine_result: null, redacted_blob_key: null })
      .where("id", "=", id)
      .execute();
    await cancelTasks(trx, id, now);
    return { blobKey: row.blob_key, redactedKey: row.redacted_blob_key };
  });
}
