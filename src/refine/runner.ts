// Runs one claimed refinement: checks that the job's audio is still there, refines its utterances, and records the
// outcome with the fencing of queue.ts while a heartbeat renews the refinement lease. The audio of a job that asked
// for refinement is kept after the base job completes and deleted here, once refinement is final.
import type { Logger } from "pino";
import type { Engine } from "../engine/client.js";
import { EngineError } from "../engine/protocol.js";
import type { JobConfig } from "../jobs/jobConfig.js";
import type { Utterance } from "../pipeline/utterances.js";
import { BlobNotFoundError, type BlobStore, type OpenedBlob } from "../storage/blobs/index.js";
import type { Store } from "../storage/db.js";
import type { JobRow } from "../storage/jobs.js";
import { completeRefinement, failRefinement, renewRefineLease, type RefineErrorCode, type RefineLease } from "./queue.js";
import { refineUtterances, type RefinerSettings } from "./refiner.js";

export interface RefineRunDeps {
  store: Store;
  blobs: BlobStore;
  engine: Engine;
  settings: RefinerSettings;
  maxAudioS: number;
  /** Engine time budget per second of audio. */
  timeoutFactor: number;
  log: Logger;
}

class RefineFailed extends Error {
  constructor(
    readonly code: RefineErrorCode,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

export async function runRefinement(job: JobRow, lease: RefineLease, deps: RefineRunDeps): Promise<"completed" | "retried" | "failed" | "lost"> {
  const { store, blobs, log } = deps;
  const jlog = log.child({ job_id: job.id, client_id: job.client_id, phase: "refine", attempt: job.refine_attempts });
  const started = Date.now();
  let lost = false;
  const heartbeat = setInterval(() => {
    renewRefineLease(store, job.id, lease)
      .then((ok) => {
        if (!ok) lost = true;
      })
      .catch((err) => jlog.warn({ err: (err as Error).message }, "refine lease renewal failed"));
  }, Math.max(200, lease.leaseMs / 3));
  let outcome: "completed" | "retried" | "failed" | "lost";
  let audio: OpenedBlob | null = null;
  try {
    // A local file for the engine: the blob itself, or a spool copy of a remote one (released below).
    audio = job.blob_key ? await blobs.open(job.blob_key).catch((err: unknown) => (err instanceof BlobNotFoundError ? null : Promise.reject(err))) : null;
    if (!audio) throw new RefineFailed("refiner_input_unavailable", "the job's audio is no longer stored");
    const audioPath = audio.path;
    const base = JSON.parse(job.result ?? "{}") as { utterances?: Utterance[] };
    if (!Array.isArray(base.utterances)) throw new RefineFailed("refiner_input_unavailable", "the base result has no utterances");
    const budgetS = job.audio_s ?? deps.maxAudioS;
    const refined = await refineUtterances(base.utterances, JSON.parse(job.config) as JobConfig, audioPath, {
      engine: deps.engine,
      settings: deps.settings,
      maxAudioS: deps.maxAudioS,
      // Several decodes per utterance: twice the base pass's budget.
      timeoutMs: Math.round((120 + 2 * budgetS * deps.timeoutFactor) * 1000),
    }).catch((err: unknown) => {
      if (err instanceof EngineError && err.code === "audio_decode_failed") {
        throw new RefineFailed("refiner_input_unavailable", err.message);
      }
      const retryable = err instanceof EngineError && (err.code === "engine_crashed" || err.code === "engine_timeout");
      throw new RefineFailed("refiner_failed", (err as Error).message, retryable);
    });
    clearInterval(heartbeat);
    if (lost || !(await completeRefinement(store, job.id, lease.workerId, { utterances: refined.utterances }))) {
      jlog.warn("refine lease lost before completion; result discarded");
      return "lost";
    }
    outcome = "completed";
    const elapsed = (Date.now() - started) / 1000;
    jlog.info({ elapsed_s: elapsed, utterances: refined.utterances.length, changed: refined.changed }, "refinement completed");
  } catch (err) {
    clearInterval(heartbeat);
    const f = err instanceof RefineFailed ? err : new RefineFailed("refiner_failed", (err as Error)?.message ?? String(err), true);
    outcome = await failRefinement(store, job, lease.workerId, f.code, f.retryable);
    jlog.warn({ code: f.code, outcome, reason: f.message }, "refinement attempt failed");
    if (outcome !== "failed") return outcome;
  } finally {
    await audio?.release();
  }
  // Final either way: the audio was kept only for this.
  if (job.blob_key) await blobs.remove(job.blob_key);
  return outcome;
}
