import type { Kysely } from "kysely";

// Refinement is its own claimable phase of a completed job (docs/enterprise.md): a status, a lease and an attempt
// count separate from the base job's, so that refining never holds back the base result. Insight is part of the
// base result; only why it failed is kept here, for operators (the read never shows it).
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  const columns: [string, string][] = [
    ["refine_status", "text"],
    ["refine_result", "text"],
    ["refine_error", "text"],
    ["refine_locked_by", "text"],
    ["refine_lease_until", big],
    ["refine_attempts", "integer"],
    ["insight_error", "text"],
  ];
  // One column per statement: SQLite's ALTER TABLE adds one column at a time.
  for (const [name, type] of columns) {
    await db.schema
      .alterTable("jobs")
      .addColumn(name, type as "text", (c) => (name === "refine_attempts" ? c.notNull().defaultTo(0) : c))
      .execute();
  }
  // Refinement claims scan queued refinements in seq order; the reaper scans running ones by lease.
  await db.schema.createIndex("jobs_refine_status_seq").on("jobs").columns(["refine_status", "seq"]).execute();
}
