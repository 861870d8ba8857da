// Queue depth, read from the store when /metrics is scraped: one grouped count over the (state, seq) index.
// Only the live states are counted; completed and failed rows accumulate until the retention sweep, and counting
// them on every scrape would cost a scan of the whole table.
import type { Store } from "../storage/db.js";
import { queueJobs } from "./registry.js";

const LIVE = ["queued", "running"] as const;

export async function refreshQueueDepth(store: Store): Promise<void> {
  const rows = await store.db
    .selectFrom("jobs")
    .select(["state", (eb) => eb.fn.countAll<number | string>().as("n")])
    .where("state", "in", [...LIVE])
    .groupBy("state")
    .execute();
  for (const state of LIVE) {
    const row = rows.find((r) => r.state === state);
    queueJobs.set({ state }, row ? Number(row.n) : 0);
  }
}
