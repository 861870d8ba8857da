// Known speakers' voiceprints (migration 009, docs/speakers.md). Every read and write names the owning client, so a
// client never reaches another's speaker: to it, another client's speaker does not exist.
import type { Store } from "./db.js";
import type { SpeakersTable } from "./schema.js";

export interface Speaker {
  id: string;
  name: string;
  model: string;
  embedding: number[];
  /** The phone print (docs/speakers.md, "Phone calls"); null for speakers enrolled before it existed. */
  embeddingPhone: number[] | null;
  speechS: number;
  createdAt: number;
  updatedAt: number;
}

const toSpeaker = (r: SpeakersTable): Speaker => ({
  id: r.id,
  name: r.name,
  model: r.model,
  embedding: JSON.parse(r.embedding) as number[],
  embeddingPhone: r.embedding_phone === null ? null : (JSON.parse(r.embedding_phone) as number[]),
  speechS: r.speech_s,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function insertSpeaker(
  store: Store,
  clientId: string,
  s: Omit<Speaker, "createdAt" | "updatedAt">,
  now = Date.now(),
): Promise<void> {
  await store.db
    .insertInto("speakers")
    .values({
      id: s.id,
      client_id: clientId,
      name: s.name,
      model: s.model,
      embedding: JSON.stringify(s.embedding),
      embedding_phone: s.embeddingPhone === null ? null : JSON.stringify(s.embeddingPhone),
      speech_s: s.speechS,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** The client's speakers, oldest first; only those of `ids` when given. */
export async function listSpeakers(store: Store, clientId: string, ids?: readonly string[]): Promise<Speaker[]> {
  if (ids && ids.length === 0) return [];
  let q = store.db.selectFrom("speakers").selectAll().where("client_id", "=", clientId);
  if (ids) q = q.where("id", "in", [...ids]);
  const rows = await q.orderBy("created_at").orderBy("id").execute();
  return rows.map(toSpeaker);
}

export async function countSpeakers(store: Store, clientId: string): Promise<number> {
  const r = await store.db
    .selectFrom("speakers")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("client_id", "=", clientId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function getSpeaker(store: Store, clientId: string, id: string): Promise<Speaker | undefined> {
  const r = await store.db
    .selectFrom("speakers")
    .selectAll()
    .where("client_id", "=", clientId)
    .where("id", "=", id)
    .executeTakeFirst();
  return r && toSpeaker(r);
}

/** A new voiceprint for the client's speaker; false when it has no such speaker. */
export async function updateVoiceprint(
  store: Store,
  clientId: string,
  id: string,
  v: Pick<Speaker, "model" | "embedding" | "embeddingPhone" | "speechS">,
  now = Date.now(),
): Promise<boolean> {
  const r = await store.db
    .updateTable("speakers")
    .set({
      model: v.model,
      embedding: JSON.stringify(v.embedding),
      embedding_phone: v.embeddingPhone === null ? null : JSON.stringify(v.embeddingPhone),
      speech_s: v.speechS,
      updated_at: now,
    })
    .where("client_id", "=", clientId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Deletes the row, voiceprint and all; false when the client has no such speaker. */
export async function deleteSpeaker(store: Store, clientId: string, id: string): Promise<boolean> {
  const r = await store.db
    .deleteFrom("speakers")
    .where("client_id", "=", clientId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
