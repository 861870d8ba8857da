import type { Kysely } from "kysely";

// Streaming sessions in the store (docs/streaming.md, "Limits and errors"), so that a client's limits hold across
// the hosts that share it: `stream_sessions` holds each open session with its client and the last time its host
// said it was alive (src/storage/streamSessions.ts; a crashed host's rows go stale), `stream_usage` one row per ended
// session with the audio it received, which the usage quota counts beside submitted files.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  await db.schema
    .createTable("stream_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("client_id", "text", (c) => c.notNull().references("clients.id"))
    .addColumn("seen_at", big, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("stream_sessions_client_seen")
    .on("stream_sessions")
    .columns(["client_id", "seen_at"])
    .execute();
  await db.schema
    .createTable("stream_usage")
    .addColumn("client_id", "text", (c) => c.notNull().references("clients.id"))
    .addColumn("ended_at", big, (c) => c.notNull())
    .addColumn("audio_s", "double precision", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("stream_usage_client_ended")
    .on("stream_usage")
    .columns(["client_id", "ended_at"])
    .execute();
}
