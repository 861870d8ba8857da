import type { Kysely } from "kysely";

// Checkpoints of a running task (docs/architecture.md, "Checkpoints"): what the engine emitted after each window of
// the task's audio, so that the next attempt (after a crash, a lost lease or a shutdown's hand-back) continues from
// there. `part` is the engine request within the task (the channel of a use_multi_channel job, else 0); `idx` the
// window. Rows go when the task ends (src/storage/tasks.ts) and with their task.
export async function up(db: Kysely<unknown>, dialect: "sqlite" | "postgres"): Promise<void> {
  const big = dialect === "postgres" ? "bigint" : "integer";
  await db.schema
    .createTable("task_checkpoints")
    .addColumn("task_seq", big, (c) => c.notNull().references("tasks.seq").onDelete("cascade"))
    .addColumn("part", "integer", (c) => c.notNull())
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("offset_s", "double precision", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("created_at", big, (c) => c.notNull())
    .addPrimaryKeyConstraint("task_checkpoints_pk", ["task_seq", "part", "idx"])
    .execute();
}
