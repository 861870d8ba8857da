// The facts of each kind of task, in one place: the lifecycle (src/storage/tasks.ts) and the worker read them; a new kind
// is a new entry here plus its task function (src/jobs/tasks/).
import type { TaskKind } from "./schema.js";

export type { TaskKind } from "./schema.js";

export interface KindFacts {
  /** How the log names an attempt of it ("job started", "refinement completed"). */
  logName: string;
  /** Lower is claimed first. */
  priority: number;
  /** Whether the job is final once this task is: its retention starts then (expires_at). */
  endsJob: boolean;
  /** The error recorded when the reaper finds the task's attempts used up by workers that died. */
  exhausted: { code: string; message: string };
  /** The error recorded when the job is deleted while this task is not final. */
  cancelled: { code: string; message: string | null };
}

export const KINDS: Record<TaskKind, KindFacts> = {
  transcribe: {
    logName: "job",
    priority: 0,
    endsJob: true,
    exhausted: { code: "E500", message: "the worker processing this job stopped responding too many times" },
    cancelled: { code: "E500", message: null },
  },
  // Base jobs first: a refinement is claimed only when no transcription waits (docs/enterprise.md, Scheduling).
  refine: {
    logName: "refinement",
    priority: 1,
    endsJob: false,
    exhausted: { code: "refiner_failed", message: "the worker refining this job stopped responding too many times" },
    cancelled: { code: "refiner_input_unavailable", message: null },
  },
};

export const TASK_KINDS = Object.keys(KINDS) as TaskKind[];

/** Retry delay after the n-th failed attempt: 1 s, 2 s, 4 s ... at most a minute. */
export const backoffMs = (attempts: number): number => Math.min(60_000, 1000 * 2 ** (attempts - 1));
