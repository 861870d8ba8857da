// Queue depth, read from the store when /metrics is scraped: one grouped count over the (state, priority, seq)
// index of tasks. Only the live states are counted; completed and failed rows accumulate until the retention sweep,
// and counting them on every scrape would cost a scan of the whole table.
import type { Store } from "../storage/db.js";
import { TASK_KINDS } from "../storage/taskKinds.js";
import { queueJobs } from "./registry.js";

const LIVE = ["queued", "running"] as const;

export async function refreshQueueDepth(store: Store): Promise<void> {
  const rows = await store.db
    .selectFrom("tasks")
    .select(["kind", "state", (eb) => eb.fn.countAll<number | string>().as("n")])
    .where("state", "in", [...LIVE])
    .groupBy(["kind", "state"])
    .execute();
  for (const kind of TASK_KINDS) {
    for (const state of LIVE) {
      const row = rows.find((r) => r.kind === kind && r.state === state);
      queueJobs.set({ kind, state }, row ? Number(row.n) : 0);
    }
  }
}
