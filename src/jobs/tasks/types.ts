// What a task function gets and gives back. It reads its job and the job's audio as a local file, does its work,
// and returns what to record; the worker does the rest (lease, heartbeat, outcome, audio clean-up).
import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Engine } from "../../engine/client.js";
import type { ModelRegistry } from "../../engine/models.js";
import type { LlmBackend } from "../../insight/index.js";
import type { RefinerSettings } from "../../refine/refiner.js";
import type { BlobStore } from "../../storage/blobs/index.js";
import type { Store } from "../../storage/db.js";
import type { JobRow } from "../../storage/jobs.js";
import type { TaskCompletion, TaskRow } from "../../storage/tasks.js";
import type { TaskCheckpoints } from "../checkpoints.js";
import type { TaskFailure } from "../failure.js";

export interface TaskContext {
  job: JobRow;
  task: TaskRow;
  /** The job's audio as a local file (a spool copy of a remote blob, released by the worker). */
  audioPath: string;
  onProgress: (fraction: number) => void;
  log: Logger;
  /** The task's checkpoints: what earlier attempts left, and where this one leaves its own. */
  checkpoints: TaskCheckpoints;
  /** Aborted when the attempt is no longer ours (lease lost, or handed back at shutdown): passed to every engine
   * request of the task, so that it ends at once without touching the other jobs the engine serves. */
  signal: AbortSignal;
}

/** What the task functions of one worker share. */
export interface TaskDeps {
  /** The engine this worker's tasks use, shared with other workers of the process (src/main.ts). */
  engine: Engine;
  /** The job store: the transcribe task reads the known speakers a job may name (docs/speakers.md). */
  store: Store;
  /** Where the transcribe task keeps a redacted copy of the audio (docs/pii.md). */
  blobs: BlobStore;
  models: ModelRegistry;
  config: Config;
  insight: LlmBackend | null;
  refiner: RefinerSettings | null;
}

export interface TaskDefinition {
  run(ctx: TaskContext): Promise<TaskCompletion>;
  /** How an error the task threw is recorded. */
  toFailure(err: unknown): TaskFailure;
  /** The failure when the job's audio is no longer stored. */
  audioMissing: TaskFailure;
}
