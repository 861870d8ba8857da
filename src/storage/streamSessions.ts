// Open streaming sessions and streamed audio, in the store that every host shares (migration 008): a client's
// session bound is counted here, across hosts, and its usage quota counts what its sessions received.
import type { Store } from "./db.js";

/** A session whose host has not said it is alive for this long is not counted (its host crashed or lost the store);
 * hosts say so every STREAM_HEARTBEAT_MS. */
export const STREAM_STALE_MS = 30_000;
export const STREAM_HEARTBEAT_MS = 10_000;

/**
 * Records session `id` of a client that may have `max` open at once, and returns whether it fits. Inserted first and
 * counted after, so two hosts admitting at once cannot both take the last place (both may refuse: a retry then gets
 * it).
 */
export async function claimStreamSession(
  store: Store,
  id: string,
  clientId: string,
  max: number,
  now = Date.now(),
): Promise<boolean> {
  await store.db.insertInto("stream_sessions").values({ id, client_id: clientId, seen_at: now }).execute();
  const r = await store.db
    .selectFrom("stream_sessions")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("client_id", "=", clientId)
    .where("seen_at", ">=", now - STREAM_STALE_MS)
    .executeTakeFirstOrThrow();
  if (Number(r.n) <= max) return true;
  await store.db.deleteFrom("stream_sessions").where("id", "=", id).execute();
  return false;
}

/** A host's heartbeat: its open sessions are alive; rows no host has renewed are dropped. */
export async function touchStreamSessions(store: Store, ids: string[], now = Date.now()): Promise<void> {
  if (ids.length) await store.db.updateTable("stream_sessions").set({ seen_at: now }).where("id", "in", ids).execute();
  await store.db
    .deleteFrom("stream_sessions")
    .where("seen_at", "<", now - STREAM_STALE_MS)
    .execute();
}

/** A session ended: its place is free, and the audio it received counts against its client's quota. */
export async function endStreamSession(store: Store, id: string, clientId: string, audioS: number): Promise<void> {
  await store.db.deleteFrom("stream_sessions").where("id", "=", id).execute();
  if (audioS > 0) {
    await store.db
      .insertInto("stream_usage")
      .values({ client_id: clientId, ended_at: Date.now(), audio_s: audioS })
      .execute();
  }
}
