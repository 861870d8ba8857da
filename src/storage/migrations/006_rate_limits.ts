import { type Kysely, sql } from "kysely";

// Token buckets shared by every API host of a scale-out deployment (src/storage/rateBuckets.ts): one row per limited
// key (`read:<client>`, `auth:<address>`). UNLOGGED: a bucket is worth nothing after a crash (it refills within
// seconds), so its updates skip the write-ahead log, which is most of an update's cost. Only PostgreSQL gets the
// table; the embedded SQLite store keeps its buckets in the API process's memory (one API process per SQLite file).
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect !== "postgres") return;
  await sql`CREATE UNLOGGED TABLE rate_buckets (
    key text PRIMARY KEY,
    tokens double precision NOT NULL,
    at bigint NOT NULL,
    ok boolean NOT NULL
  )`.execute(db);
  // The sweep drops idle buckets by age.
  await sql`CREATE INDEX rate_buckets_at ON rate_buckets (at)`.execute(db);
}
