// What the rest of the code calls: small recording functions, so a hook in the worker or pipeline is one line
// and knows nothing of prom-client.
import type { TaskKind } from "../storage/schema.js";
import {
  audioSeconds,
  errors,
  insightFailures,
  jobDuration,
  jobQueueWait,
  realTimeFactor,
  type Stage,
  stageDuration,
  streamAudioSeconds,
  streamLatency,
  streamSessions,
  streamSessionsTotal,
} from "./registry.js";

export type { Stage } from "./registry.js";
export { registry } from "./registry.js";

/** Runs one pipeline stage and records its wall time, whether it succeeds or throws. */
export async function timeStage<T>(stage: Stage, fn: () => Promise<T> | T): Promise<T> {
  const end = stageDuration.startTimer({ stage });
  try {
    return await fn();
  } finally {
    end();
  }
}

export type AttemptOutcome = "completed" | "failed" | "retried" | "lost";

/** One task attempt ended. `audioS` counts only for completed transcriptions (processed audio, and its RTF). */
export function recordAttempt(
  kind: TaskKind,
  outcome: AttemptOutcome,
  elapsedS: number,
  audioS: number | null,
  errorCode?: string,
): void {
  jobDuration.observe({ kind, outcome }, elapsedS);
  if (kind === "transcribe" && outcome === "completed" && audioS) {
    audioSeconds.inc(audioS);
    realTimeFactor.observe(elapsedS / audioS);
  }
  if (errorCode) errors.inc({ source: kind === "transcribe" ? "job" : kind, code: errorCode });
}

/** A task's first claim: how long it waited in the queue. */
export function recordFirstClaim(kind: TaskKind, createdAt: number, now = Date.now()): void {
  jobQueueWait.observe({ kind }, Math.max(0, (now - createdAt) / 1000));
}

/** An API request was refused with a spec error body. */
export function recordApiError(code: string): void {
  errors.inc({ source: "api", code });
}

/** A job that asked for insight got `[]`; `reason` is InsightFailure (src/insight/schema.ts). */
export function recordInsightFailure(reason: string): void {
  insightFailures.inc({ reason });
}

/** A streaming session opened (+1) or closed (-1, with how it ended). */
export function recordStreamSession(delta: 1 | -1, outcome?: string): void {
  streamSessions.inc(delta);
  if (delta === -1) streamSessionsTotal.inc({ outcome: outcome ?? "completed" });
}

/** Audio seconds received by a streaming session. */
export function recordStreamAudio(seconds: number): void {
  streamAudioSeconds.inc(seconds);
}

/** A streaming answer's latency in seconds (docs/streaming.md defines what each is measured from). */
export function recordStreamLatency(kind: "first_interim" | "final", seconds: number): void {
  streamLatency.observe({ kind }, Math.max(0, seconds));
}
