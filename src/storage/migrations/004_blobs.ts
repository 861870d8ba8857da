import { type Kysely, sql } from "kysely";

// The PostgreSQL blob store (SORI_BLOB_STORE=postgres, src/storage/blobs/postgres.ts): each blob is a run of
// ~1 MiB chunks keyed by (blob_key, seq). Only PostgreSQL gets the table; the SQLite job store has no use for it.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect !== "postgres") return;
  await db.schema
    .createTable("blob_chunks")
    .addColumn("blob_key", "text", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("bytes", "bytea", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("blob_chunks_pk", ["blob_key", "seq"])
    .execute();
  // Audio is already compressed: storing it out of line without another compression pass saves CPU for nothing lost.
  await sql`ALTER TABLE blob_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL`.execute(db);
  // The orphan sweep lists first chunks by age.
  await db.schema
    .createIndex("blob_chunks_first_created")
    .on("blob_chunks")
    .column("created_at")
    .where(sql.ref("seq"), "=", 0)
    .execute();
}
