// A task's checkpoints (migration 007): the engine's per-window progress of the task's current work, written as it
// comes and read back by the next attempt. Writes are fenced like every task write (src/storage/tasks.ts): a worker
// that no longer holds the task's lease adds nothing. A task's end drops them (src/storage/tasks.ts).
import { sql } from "kysely";
import type { Store } from "./db.js";
import { fenced } from "./tasks.js";

export interface CheckpointRow {
  part: number;
  idx: number;
  offset_s: number;
  data: string;
}

/** Stores one checkpoint if the task is still running under `workerId`; false when it is not (nothing written).
 * A checkpoint already stored under that index (an earlier attempt's) is kept: it holds the same work. */
export async function saveCheckpoint(
  store: Store,
  task: { seq: number; workerId: string },
  row: CheckpointRow,
  now = Date.now(),
): Promise<boolean> {
  const held = store.db
    .selectFrom("tasks")
    .select(sql.lit(1).as("held"))
    .where((eb) => fenced(eb, task.seq, task.workerId));
  const r = await sql`
    INSERT INTO task_checkpoints (task_seq, part, idx, offset_s, data, created_at)
    SELECT ${task.seq}, ${row.part}, ${row.idx}, ${row.offset_s}, ${row.data}, ${now}
    WHERE EXISTS ${held}
    ON CONFLICT DO NOTHING`.execute(store.db);
  return Number(r.numAffectedRows ?? 0) > 0;
}

/** The checkpoints of one part of a task, in window order. */
export async function loadCheckpoints(store: Store, taskSeq: number, part: number): Promise<CheckpointRow[]> {
  return store.db
    .selectFrom("task_checkpoints")
    .select(["part", "idx", "offset_s", "data"])
    .where("task_seq", "=", taskSeq)
    .where("part", "=", part)
    .orderBy("idx")
    .execute();
}
