// How an error thrown by a task becomes the task's recorded failure: its code, the message a client may read, and
// whether another attempt may pass. One mapping per kind; paths are hidden from every message.
import { EngineError } from "../engine/protocol.js";
import type { AttemptFailure } from "../storage/tasks.js";

/** A task's classified failure: what the store records of a failed attempt. */
export type TaskFailure = AttemptFailure;

/** Thrown by a task function for a failure it has already classified. */
export class TaskFailed extends Error {
  constructor(readonly failure: TaskFailure) {
    super(failure.message);
  }
}

/**
 * A transcription's failure: engine errors become the job's error. Bad audio reuses the submit codes with the same
 * meaning (H0010 not decodable, H0006 too long) and is final; crashes and timeouts are retried, then end as E500.
 */
export function toFailure(err: unknown): TaskFailure {
  if (err instanceof TaskFailed) return err.failure;
  if (err instanceof EngineError) {
    switch (err.code) {
      case "audio_decode_failed":
        return { code: "H0010", message: `the audio could not be decoded: ${err.message}`, retryable: false };
      case "audio_too_long":
        return { code: "H0006", message: err.message, retryable: false };
      case "model_load_failed":
        return { code: "E500", message: `the recognition model is not available: ${err.message}`, retryable: false };
      case "bad_request":
        return { code: "E500", message: `internal request error: ${err.message}`, retryable: false };
      default:
        return { code: "E500", message: `transcription failed: ${err.message}`, retryable: true };
    }
  }
  return { code: "E500", message: `transcription failed: ${(err as Error)?.message ?? String(err)}`, retryable: true };
}

/** A refinement's failure (docs/enterprise.md): audio that cannot be read again is final; a crashed or hung engine
 * may pass on another attempt; anything else is refiner_failed for good. */
export function toRefineFailure(err: unknown): TaskFailure {
  if (err instanceof TaskFailed) return err.failure;
  const message = (err as Error)?.message ?? String(err);
  if (err instanceof EngineError) {
    if (err.code === "audio_decode_failed") return { code: "refiner_input_unavailable", message, retryable: false };
    return {
      code: "refiner_failed",
      message,
      retryable: err.code === "engine_crashed" || err.code === "engine_timeout",
    };
  }
  return { code: "refiner_failed", message, retryable: true };
}

/** The client sees the failure's message; where the server keeps files is none of its business (the log has them). */
export function hidePaths(message: string, audioPath: string | null): string {
  const named = audioPath ? message.split(audioPath).join("the uploaded file") : message;
  return named.replace(/(?<![\w.:/])\/(?:[\w.-]+\/)+[\w.-]*/g, "<server path>");
}
