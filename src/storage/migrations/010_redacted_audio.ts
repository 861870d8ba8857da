import type { Kysely } from "kysely";

// The redacted copy of a job's audio (`pii_redaction.audio`, docs/pii.md): its blob key on the job's row, set when the
// transcribe task completes, cleared (and the blob removed) when the job expires or is deleted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("redacted_blob_key", "text").execute();
}
