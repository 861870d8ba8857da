// A worker: claims the oldest queued job, runs the pipeline on it with its own engine, and records the outcome.
// While it works it renews the job's lease; if it dies, the reaper hands the job to another worker.
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Engine } from "../engine/client.js";
import type { ModelRegistry } from "../engine/models.js";
import { EngineError } from "../engine/protocol.js";
import { runPipeline } from "../pipeline/run.js";
import { recordAttempt, recordFirstClaim, timeStage } from "../metrics/index.js";
import { BlobNotFoundError, type BlobStore, type OpenedBlob } from "../storage/blobs/index.js";
import type { Store } from "../storage/db.js";
import type { JobRow } from "../storage/jobs.js";
import { insightForJob, type LlmBackend } from "../insight/index.js";
import { claimRefinements, reapRefinements, releaseRefinement } from "../refine/queue.js";
import type { RefinerSettings } from "../refine/refiner.js";
import { runRefinement } from "../refine/runner.js";
import type { JobConfig } from "./jobConfig.js";
import { notifyJobQueued } from "./wakeup.js";
import {
  claimJobs,
  completeJob,
  failJob,
  reapExpired,
  releaseJob,
  renewLease,
  type CompletionAddons,
  type JobFailure,
  type Lease,
} from "./queue.js";

export interface WorkerDeps {
  store: Store;
  blobs: BlobStore;
  engine: Engine;
  models: ModelRegistry;
  config: Config;
  log: Logger;
  /** Enterprise add-ons (docs/enterprise.md): the insight LLM (shared by the process's workers) and the refinement
   * configuration; null where this deployment has none. */
  insight?: LlmBackend | null;
  refiner?: RefinerSettings | null;
  /** Called, without waiting, when a job this worker ran became final (completed or failed): callbacks. */
  onFinal?: (jobId: string) => void;
}

export class Worker {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private current: JobRow | null = null;
  private currentPhase: "base" | "refine" = "base";
  private readonly lease: Lease;

  constructor(
    readonly id: string,
    private readonly deps: WorkerDeps,
  ) {
    this.lease = { workerId: id, leaseMs: deps.config.leaseS * 1000 };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Called when a job was just queued in this process: skip the rest of the poll sleep. */
  nudge(): void {
    this.wake?.();
  }

  /**
   * Stops claiming. An in-flight job gets `graceMs` (SORI_SHUTDOWN_GRACE_S) to finish; after that it is handed back
   * to the queue and the engine is killed, so another worker can take it at once instead of waiting for the lease
   * to expire (test/e2e/faults.test.ts).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.nudge();
    const loop = this.loop ?? Promise.resolve();
    if (await Promise.race([loop.then(() => true), unrefSleep(graceMs).then(() => false)])) {
      await this.deps.engine.stop();
      return;
    }
    const job = this.current;
    if (job) {
      const release = this.currentPhase === "refine" ? releaseRefinement : releaseJob;
      await release(this.deps.store, job.id, this.id).then(
        () => this.deps.log.warn({ job_id: job.id, client_id: job.client_id, grace_s: graceMs / 1000 }, "shutdown: in-flight job handed back to the queue"),
        (err: Error) => this.deps.log.warn({ job_id: job.id, client_id: job.client_id, err: err.message }, "shutdown: hand-back failed; the job returns when its lease expires"),
      );
    }
    // The engine is still decoding work that is no longer ours: kill it now rather than wait for it. The loop then
    // sees the attempt fail, its writes are fenced off (the row is not locked by us any more), and it ends; the
    // wait is bounded so that the store is not closed under it.
    await this.deps.engine.stop(0);
    await Promise.race([loop, unrefSleep(5000)]);
  }

  /** Work was queued again (a retry, a refinement): idle workers in other processes need not wait for their poll. */
  private wakeOthers(): void {
    notifyJobQueued(this.deps.store).catch((err: Error) => this.deps.log.debug({ err: err.message }, "job notification failed"));
  }

  private async run(): Promise<void> {
    const { store, config, log } = this.deps;
    let lastReap = 0;
    while (this.running) {
      try {
        if (Date.now() - lastReap > config.leaseS * 500) {
          lastReap = Date.now();
          const r = await reapExpired(store, config.retentionS * 1000);
          if (r.requeued || r.failed) log.warn({ ...r }, "reaped jobs whose lease expired");
          const rr = await reapRefinements(store);
          if (rr.requeued || rr.failed) log.warn({ ...rr }, "reaped refinements whose lease expired");
        }
        const [job] = await claimJobs(store, this.lease, 1);
        // Base jobs first: a refinement is claimed only when no base job waits (docs/enterprise.md, Scheduling).
        const refinement = job || !this.refines() ? undefined : (await claimRefinements(store, this.lease, 1))[0];
        if (refinement) {
          this.current = refinement;
          this.currentPhase = "refine";
          await runRefinement(refinement, this.lease, {
            store,
            blobs: this.deps.blobs,
            engine: this.deps.engine,
            settings: this.deps.refiner!,
            maxAudioS: config.maxAudioS,
            timeoutFactor: config.engineTimeoutFactor,
            log,
          });
          continue;
        }
        if (!job) {
          await new Promise<void>((r) => {
            this.wake = r;
            setTimeout(r, config.pollMs);
          });
          this.wake = null;
          continue;
        }
        this.current = job;
        this.currentPhase = "base";
        await this.process(job);
      } catch (err) {
        // The store being unreachable must not end the loop: log, back off, try again.
        log.error({ err: (err as Error).message }, "worker loop error");
        await sleep(config.pollMs);
      } finally {
        this.current = null;
      }
    }
  }

  private refines(): boolean {
    return Boolean(this.deps.refiner && this.deps.config.refine.enabled && this.deps.config.refine.claim);
  }

  private async process(job: JobRow): Promise<void> {
    const { store, blobs, engine, models, config, log } = this.deps;
    const jlog = log.child({ job_id: job.id, client_id: job.client_id, attempt: job.attempts });
    const started = Date.now();
    jlog.info({ audio_s: job.audio_s, format: job.file_format }, "job started");
    if (job.attempts === 1) recordFirstClaim(job.created_at, started);

    let progress = 0;
    let lost = false;
    const heartbeat = setInterval(() => {
      renewLease(store, job.id, this.lease, progress)
        .then((ok) => {
          if (!ok) lost = true;
        })
        .catch((err) => jlog.warn({ err: (err as Error).message }, "lease renewal failed"));
    }, Math.max(200, (config.leaseS * 1000) / 3));

    let audio: OpenedBlob | null = null;
    try {
      if (!job.blob_key) throw new JobFailed({ code: "E500", message: "the job's audio is no longer stored", retryable: false });
      // A local file for the engine: the blob itself, or a spool copy of a remote one (released below).
      audio = await blobs.open(job.blob_key).catch((err: unknown) => {
        throw err instanceof BlobNotFoundError ? new JobFailed({ code: "E500", message: "the job's audio is no longer stored", retryable: false }) : err;
      });
      const jobConfig = JSON.parse(job.config) as JobConfig;
      const results: Awaited<ReturnType<typeof runPipeline>> & { insight?: unknown } = await runPipeline(
        { config: jobConfig, audioPath: audio.path, maxAudioS: config.maxAudioS },
        { engine, models, timeoutFactor: config.engineTimeoutFactor, onProgress: (f) => (progress = f) },
        job.audio_s,
      );
      const addons: CompletionAddons = {};
      if (jobConfig.use_insight) {
        // The spec puts insight in the base result at completion, so `completed` waits for it; a failure gives
        // `insight: []` and the transcription completes all the same (docs/enterprise.md).
        const insightStarted = Date.now();
        const { insight, error } = await timeStage("insight", () => insightForJob(
          { utterances: results.utterances, language: jobConfig.language, prompt: jobConfig.insight?.prompt, keywords: jobConfig.keywords },
          this.deps.insight ?? null,
          config.insight.timeoutS * 1000,
        ));
        results.insight = insight;
        addons.insight_error = error;
        if (error) jlog.warn({ reason: error }, "insight failed; the job completes with insight []");
        else jlog.info({ elapsed_s: (Date.now() - insightStarted) / 1000 }, "insight generated");
      }
      const refine = jobConfig.use_refinement;
      if (refine) {
        Object.assign(addons, config.refine.enabled && this.deps.refiner ? { refine_status: "queued" } : { refine_status: "failed", refine_error: "refiner_enqueue_failed" });
      }
      clearInterval(heartbeat);
      if (lost || !(await timeStage("store", () => completeJob(store, job.id, this.id, results, config.retentionS * 1000, Date.now(), addons)))) {
        recordAttempt("lost", (Date.now() - started) / 1000, null);
        jlog.warn("lease lost before completion; result discarded (another worker owns the job)");
        return;
      }
      const elapsed = (Date.now() - started) / 1000;
      recordAttempt("completed", elapsed, job.audio_s);
      jlog.info({ elapsed_s: elapsed, rtf: job.audio_s ? elapsed / job.audio_s : null, utterances: results.utterances.length }, "job completed");
      this.deps.onFinal?.(job.id);
      // A queued refinement re-decodes the audio; it deletes the audio once it is final (src/refine/runner.ts).
      if (addons.refine_status !== "queued") await blobs.remove(job.blob_key);
      else this.wakeOthers();
    } catch (err) {
      clearInterval(heartbeat);
      const f = toFailure(err);
      jlog.warn({ code: f.code, reason: f.message }, "job attempt failed");
      const outcome = await failJob(store, job, this.id, { ...f, message: hidePaths(f.message, audio?.path ?? null) }, config.retentionS * 1000);
      jlog.info({ outcome }, "job attempt recorded");
      recordAttempt(outcome, (Date.now() - started) / 1000, null, f.code);
      if (outcome === "failed") this.deps.onFinal?.(job.id);
      if (outcome === "failed" && job.blob_key) await blobs.remove(job.blob_key);
      if (outcome === "retried") this.wakeOthers();
    } finally {
      await audio?.release();
    }
  }
}

class JobFailed extends Error {
  constructor(readonly failure: JobFailure) {
    super(failure.message);
  }
}

/**
 * Engine errors become the job's error. Bad audio reuses the submit codes with the same meaning (H0010 not
 * decodable, H0006 too long) and is final; crashes and timeouts are retried, then end as E500.
 */
export function toFailure(err: unknown): JobFailure {
  if (err instanceof JobFailed) return err.failure;
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

/** The client sees the failure's message; where the server keeps files is none of its business (the log has them). */
export function hidePaths(message: string, audioPath: string | null): string {
  const named = audioPath ? message.split(audioPath).join("the uploaded file") : message;
  return named.replace(/(?<![\w.:/])\/(?:[\w.-]+\/)+[\w.-]*/g, "<server path>");
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** A sleep that does not keep the process alive (shutdown waits). */
const unrefSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
