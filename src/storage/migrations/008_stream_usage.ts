import type { Kysely } from "kysely";

// Audio a client streamed (docs/streaming.md, "Limits and errors"): one row per ended streaming session, so that the
// usage quota counts streamed audio beside submitted files (src/storage/jobs.ts, audioSecondsSince), on every host
// that shares the store.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
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
