import type { Kysely } from "kysely";

// Known speakers (docs/speakers.md): one row per enrolled voice, owned by the client that enrolled it. Only the
// voiceprint is kept (a unit-norm embedding as a JSON array, with the name of the model that made it), never audio.
// Deleting a speaker deletes its row.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  await db.schema
    .createTable("speakers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("client_id", "text", (c) => c.notNull().references("clients.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("embedding", "text", (c) => c.notNull())
    .addColumn("speech_s", "double precision", (c) => c.notNull())
    .addColumn("created_at", big, (c) => c.notNull())
    .addColumn("updated_at", big, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("speakers_client").on("speakers").columns(["client_id", "created_at"]).execute();
}
