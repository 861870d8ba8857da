// Retention: results are kept `retentionS` after a job ends, then dropped (reads answer 410 H0007), with the job's
// redacted copy of the audio (docs/pii.md). Audio is already deleted when the job ends; this sweep also removes
// blobs that no live job refers to (an upload cut off mid-way, a crash between storing the file and recording the
// job).
import type { BlobStore } from "../storage/blobs/index.js";
import type { Store } from "../storage/db.js";

/** Default for `orphanAgeMs` (SORI_ORPHAN_AGE_S): an upload in progress has no job row yet, so the age must exceed
 * the longest pause a live upload may have. Tests lower it to see a killed upload's file go. */
export const ORPHAN_AGE_MS = 3600_000;

export async function sweepExpired(
  store: Store,
  blobs: BlobStore,
  now = Date.now(),
  orphanAgeMs = ORPHAN_AGE_MS,
): Promise<{ expired: number; orphans: number }> {
  // A redacted copy of the audio (docs/pii.md) goes with its job's results.
  const redacted = await store.db
    .selectFrom("jobs")
    .select("redacted_blob_key")
    .where("expired", "=", 0)
    .where("expires_at", "<", now)
    .where("redacted_blob_key", "is not", null)
    .execute();
  const r = await store.db
    .updateTable("jobs")
    .set({ result: null, expired: 1, blob_key: null, redacted_blob_key: null })
    .where("expired", "=", 0)
    .where("expires_at", "<", now)
    .executeTakeFirst();
  for (const { redacted_blob_key: key } of redacted) if (key) await blobs.remove(key);
  let orphans = 0;
  for (const key of await blobs.listOlderThan(orphanAgeMs, now)) {
    // A job keeps its audio while any of its tasks is pending: a completed job while its refinement is
    // (docs/enterprise.md). Its redacted copy is kept until it expires or is deleted (the key is cleared then).
    const live = await store.db
      .selectFrom("jobs")
      .select("id")
      .where((eb) =>
        eb.or([
          eb("redacted_blob_key", "=", key),
          eb.and([
            eb("blob_key", "=", key),
            eb.exists(
              eb
                .selectFrom("tasks")
                .select("seq")
                .whereRef("tasks.job_id", "=", "jobs.id")
                .where("tasks.state", "in", ["queued", "running"]),
            ),
          ]),
        ]),
      )
      .executeTakeFirst();
    if (!live) {
      await blobs.remove(key);
      orphans += 1;
    }
  }
  return { expired: Number(r.numUpdatedRows), orphans };
}
