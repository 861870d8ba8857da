// The engine's checkpoints in the pipeline: an engine request that continues after what earlier attempts of its task
// stored, and stores what it emits (docs/architecture.md, "Checkpoints"). The store itself is the worker's
// (src/jobs/checkpoints.ts); the pipeline only sees this interface.
import type { EngineCheckpoint, TranscribeParams } from "../engine/protocol.js";

/** A task's checkpoint store, as the pipeline sees it (src/jobs/checkpoints.ts). `part` is the engine request within
 * the job: the channel of a use_multi_channel job, else 0. */
export interface Checkpoints {
  /** What earlier attempts stored for this part, in window order (empty: start from the beginning). */
  load(part: number): Promise<EngineCheckpoint[]>;
  /** Stores one, in the background and in order. */
  save(part: number, checkpoint: EngineCheckpoint): void;
}

/** The engine request of one part with its checkpoints: continue after the stored ones, and store the new ones. */
export async function resumable(
  params: TranscribeParams,
  checkpoints: Checkpoints | undefined,
  part: number,
): Promise<{ params: TranscribeParams; onCheckpoint?: (checkpoint: EngineCheckpoint) => void }> {
  if (!checkpoints) return { params };
  const stored = await checkpoints.load(part);
  return {
    params: { ...params, checkpoints: true, ...(stored.length ? { resume_from: stored } : {}) },
    onCheckpoint: (cp) => checkpoints.save(part, cp),
  };
}
