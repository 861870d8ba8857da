// Job records: creation at submit, reads for the API, and the aggregates the submit limits need.
// Queue transitions (claim, lease, complete, fail) live in src/jobs/queue.ts.
import type { Store } from "./db.js";
import type { JobsTable } from "./schema.js";

export type JobRow = Omit<JobsTable, "seq"> & { seq: number };

export interface NewJob {
  id: string;
  client_id: string;
  config: string;
  blob_key: string;
  file_format: string;
  audio_s: number | null;
  max_attempts: number;
}

export async function insertJob(store: Store, j: NewJob, now = Date.now()): Promise<void> {
  await store.db
    .insertInto("jobs")
    .values({ ...j, state: "queued", attempts: 0, run_at: now, progress: 0, created_at: now, expired: 0 })
    .execute();
}

export async function getJob(store: Store, id: string): Promise<JobRow | undefined> {
  return store.db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Jobs of a client that are not final yet (queued or running): the concurrency bound counts these. */
export async function countInFlight(store: Store, clientId: string): Promise<number> {
  const r = await store.db
    .selectFrom("jobs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("client_id", "=", clientId)
    .where("state", "in", ["queued", "running"])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Audio seconds a client submitted since `since` (epoch ms): the usage quota counts these. */
export async function audioSecondsSince(store: Store, clientId: string, since: number): Promise<number> {
  const r = await store.db
    .selectFrom("jobs")
    .select((eb) => eb.fn.sum<number | null>("audio_s").as("s"))
    .where("client_id", "=", clientId)
    .where("created_at", ">=", since)
    .executeTakeFirstOrThrow();
  return Number(r.s ?? 0);
}
