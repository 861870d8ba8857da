import type { Kysely } from "kysely";

// `dialect` decides the one thing the two engines spell differently: an auto-increment key.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  await db.schema
    .createTable("clients")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("tier", "text", (c) => c.notNull())
    .addColumn("max_concurrent", "integer")
    .addColumn("quota_s", "double precision")
    .addColumn("read_rps", "double precision")
    .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", big, (c) => c.notNull())
    .execute();

  let jobs = db.schema.createTable("jobs");
  jobs =
    dialect === "postgres"
      ? jobs.addColumn("seq", "bigserial", (c) => c.primaryKey())
      : jobs.addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement());
  await jobs
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("client_id", "text", (c) => c.notNull().references("clients.id"))
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("config", "text", (c) => c.notNull())
    .addColumn("blob_key", "text")
    .addColumn("file_format", "text", (c) => c.notNull())
    .addColumn("audio_s", "double precision")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("max_attempts", "integer", (c) => c.notNull())
    .addColumn("run_at", big, (c) => c.notNull())
    .addColumn("locked_by", "text")
    .addColumn("lease_until", big)
    .addColumn("progress", "double precision", (c) => c.notNull().defaultTo(0))
    .addColumn("result", "text")
    .addColumn("error_code", "text")
    .addColumn("error_message", "text")
    .addColumn("created_at", big, (c) => c.notNull())
    .addColumn("started_at", big)
    .addColumn("finished_at", big)
    .addColumn("expires_at", big)
    .addColumn("expired", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  // The claim query scans queued jobs in seq order; the reaper scans running jobs by lease.
  await db.schema.createIndex("jobs_state_seq").on("jobs").columns(["state", "seq"]).execute();
  await db.schema.createIndex("jobs_client_state").on("jobs").columns(["client_id", "state"]).execute();
  await db.schema.createIndex("jobs_expires").on("jobs").columns(["expires_at"]).execute();
}
