import type { Kysely } from "kysely";

// Job list and delete (docs/extras.md): a deleted job keeps its row (the usage quota still counts its audio) with
// the time it was deleted; the list reads a client's jobs newest first.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  await db.schema.alterTable("jobs").addColumn("deleted_at", big).execute();
  await db.schema.createIndex("jobs_client_seq").on("jobs").columns(["client_id", "seq"]).execute();
}
