// The worker's side of checkpoints (docs/architecture.md, "Checkpoints"): the engine's per-window checkpoints of a
// task go into the store as they come, in order and fenced by the task's lease, and the next attempt of the task
// reads them back to continue from the last one.
import type { Logger } from "pino";
import type { EngineCheckpoint } from "../engine/protocol.js";
import type { Checkpoints } from "../pipeline/run.js";
import { loadCheckpoints, saveCheckpoint } from "../storage/checkpoints.js";
import type { Store } from "../storage/db.js";

const SAMPLE_RATE = 16000; // the engine's sample rate: checkpoint offsets are in its samples

export class TaskCheckpoints implements Checkpoints {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly task: { seq: number; workerId: string },
    private readonly log: Logger,
  ) {}

  async load(part: number): Promise<EngineCheckpoint[]> {
    const rows = await loadCheckpoints(this.store, this.task.seq, part);
    // Only the unbroken run from window 0 describes one decoding (the engine checks again).
    const run = rows.filter((r, i) => r.idx === i);
    const last = run[run.length - 1];
    if (last) this.log.info({ part, windows: run.length, offset_s: last.offset_s }, "resuming from checkpoint");
    return run.map((r) => JSON.parse(r.data) as EngineCheckpoint);
  }

  save(part: number, cp: EngineCheckpoint): void {
    const row = { part, idx: cp.index, offset_s: cp.offset_sample / SAMPLE_RATE, data: JSON.stringify(cp) };
    this.chain = this.chain
      .then(() => saveCheckpoint(this.store, this.task, row))
      .then((stored) => this.log.info({ part, window: row.idx, offset_s: row.offset_s, stored }, "checkpoint"))
      // A checkpoint that could not be written only means more work to redo after a crash: never a failed task.
      .catch((err: Error) => this.log.warn({ part, window: row.idx, err: err.message }, "checkpoint not stored"));
  }

  /** Waits for the checkpoints still being written (before the task's outcome is recorded, which drops them). */
  flush(): Promise<void> {
    return this.chain;
  }
}
