// A worker: claims the next task, runs the task function of its kind on the engine it shares with other workers of
// the process (src/main.ts), and records the outcome through the one task lifecycle (src/storage/tasks.ts). While it
// works it renews the task's lease; if the lease is lost (reaped, or the job deleted), it aborts the task's engine
// requests rather than decode to the end for nothing, and leaves the engine to the other jobs it serves; if the worker
// dies, the reaper hands the task to another worker.
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Engine } from "../engine/client.js";
import type { ModelRegistry } from "../engine/models.js";
import type { LlmBackend } from "../insight/index.js";
import { recordAttempt, recordFirstClaim, timeStage } from "../metrics/index.js";
import type { RefinerSettings } from "../refine/refiner.js";
import { BlobNotFoundError, type BlobStore, type OpenedBlob } from "../storage/blobs/index.js";
import type { Store } from "../storage/db.js";
import { getJob, hasPendingTasks } from "../storage/jobs.js";
import type { TaskKind } from "../storage/schema.js";
import { KINDS } from "../storage/taskKinds.js";
import {
  claimTasks,
  completeTask,
  failTask,
  type Lease,
  reapExpired,
  releaseTask,
  renewLease,
  type TaskRow,
} from "../storage/tasks.js";
import { TaskCheckpoints } from "./checkpoints.js";
import { hidePaths, TaskFailed } from "./failure.js";
import { type TaskDefinition, taskDefinitions } from "./tasks/index.js";
import { notifyJobQueued } from "./wakeup.js";

export interface WorkerDeps {
  store: Store;
  blobs: BlobStore;
  /** Shared with other workers: the worker never stops it (its owner does, after the workers have stopped). */
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
  private current: TaskRow | null = null;
  /** Aborts the current task's engine requests. */
  private abort: AbortController | null = null;
  private readonly lease: Lease;
  private readonly tasks: Record<TaskKind, TaskDefinition>;
  /** The kinds this worker claims: refinement only where it is configured and this process takes it. */
  private readonly kinds: TaskKind[];

  constructor(
    readonly id: string,
    private readonly deps: WorkerDeps,
  ) {
    this.lease = { workerId: id, leaseMs: deps.config.leaseS * 1000 };
    const refiner = deps.refiner ?? null;
    this.tasks = taskDefinitions({
      engine: deps.engine,
      store: deps.store,
      blobs: deps.blobs,
      models: deps.models,
      config: deps.config,
      insight: deps.insight ?? null,
      refiner,
    });
    const refines = Boolean(refiner && deps.config.refine.enabled && deps.config.refine.claim);
    this.kinds = refines ? ["transcribe", "refine"] : ["transcribe"];
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
   * Stops claiming. An in-flight task gets `graceMs` (SORI_SHUTDOWN_GRACE_S) to finish; after that it is handed
   * back to the queue and its engine requests are aborted, so another worker can take it at once instead of waiting
   * for the lease to expire (test/e2e/faults.test.ts). The engine is left running: its owner stops it.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.nudge();
    const loop = this.loop ?? Promise.resolve();
    if (await Promise.race([loop.then(() => true), unrefSleep(graceMs).then(() => false)])) return;
    const task = this.current;
    if (task) {
      const who = { job_id: task.job_id, kind: task.kind };
      await releaseTask(this.deps.store, task, this.id).then(
        () =>
          this.deps.log.warn({ ...who, grace_s: graceMs / 1000 }, "shutdown: in-flight task handed back to the queue"),
        (err: Error) =>
          this.deps.log.warn(
            { ...who, err: err.message },
            "shutdown: hand-back failed; the task returns when its lease expires",
          ),
      );
    }
    // The engine is still decoding work that is no longer ours: the task's requests are dropped now rather than
    // waited for. The loop then sees the attempt fail, its writes are fenced off (the row is not locked by us any
    // more), and it ends; the wait is bounded so that the store is not closed under it.
    this.abort?.abort();
    await Promise.race([loop, unrefSleep(5000)]);
  }

  /** Work was queued again (a retry, a refinement): idle workers in other processes need not wait for their poll. */
  private wakeOthers(): void {
    notifyJobQueued(this.deps.store).catch((err: Error) =>
      this.deps.log.debug({ err: err.message }, "job notification failed"),
    );
  }

  private async run(): Promise<void> {
    const { store, config, log } = this.deps;
    let lastReap = 0;
    while (this.running) {
      try {
        if (Date.now() - lastReap > config.leaseS * 500) {
          lastReap = Date.now();
          const r = await reapExpired(store, config.retentionS * 1000);
          if (r.requeued || r.failed) log.warn({ ...r }, "reaped tasks whose lease expired");
        }
        const [task] = await claimTasks(store, this.lease, { kinds: this.kinds });
        if (!task) {
          await new Promise<void>((r) => {
            this.wake = r;
            setTimeout(r, config.pollMs);
          });
          this.wake = null;
          continue;
        }
        this.current = task;
        await this.runTask(task);
      } catch (err) {
        // The store being unreachable must not end the loop: log, back off, try again.
        log.error({ err: (err as Error).message }, "worker loop error");
        await sleep(config.pollMs);
      } finally {
        this.current = null;
      }
    }
  }

  /** One attempt at a claimed task: open the job's audio, run the kind's task function, record the outcome. */
  private async runTask(task: TaskRow): Promise<void> {
    const { store, blobs, config, log } = this.deps;
    const def = this.tasks[task.kind];
    const retentionMs = config.retentionS * 1000;
    const job = await getJob(store, task.job_id);
    const tlog = log.child({ job_id: task.job_id, client_id: job?.client_id, kind: task.kind, attempt: task.attempts });
    const started = Date.now();
    const name = KINDS[task.kind].logName;
    tlog.info({ audio_s: job?.audio_s, format: job?.file_format }, `${name} started`);
    if (task.attempts === 1) recordFirstClaim(task.kind, task.created_at, started);

    let progress = 0;
    let lost = false;
    // Set once the attempt's outcome is being recorded: a renewal answered after that (in flight while the task
    // completed, or held up by a cut link) says nothing about the engine, which may serve the next task by then.
    let ended = false;
    const abort = new AbortController();
    this.abort = abort;
    const heartbeat = setInterval(
      () => {
        renewLease(store, task, this.lease, progress)
          .then((ok) => {
            if (ok || lost || ended) return;
            lost = true;
            // Someone else owns the task now (or it was cancelled): whatever the engine still computes for it is
            // discarded. Only this task's requests end; the engine goes on with the other jobs it serves.
            tlog.warn("lease lost; cancelling the task's engine requests");
            abort.abort();
          })
          .catch((err) => tlog.warn({ err: (err as Error).message }, "lease renewal failed"));
      },
      Math.max(200, this.lease.leaseMs / 3),
    );

    let audio: OpenedBlob | null = null;
    let outcome: "completed" | "retried" | "failed" | "lost";
    let code: string | undefined;
    try {
      if (!job?.blob_key) throw new TaskFailed(def.audioMissing);
      // A local file for the engine: the blob itself, or a spool copy of a remote one (released below).
      audio = await blobs.open(job.blob_key).catch((err: unknown) => {
        throw err instanceof BlobNotFoundError ? new TaskFailed(def.audioMissing) : err;
      });
      const checkpoints = new TaskCheckpoints(store, { seq: task.seq, workerId: this.id }, tlog);
      const done = await def.run({
        job,
        task,
        audioPath: audio.path,
        onProgress: (f) => (progress = f),
        log: tlog,
        checkpoints,
        signal: abort.signal,
      });
      clearInterval(heartbeat);
      ended = true;
      const stored = !lost && (await timeStage("store", () => completeTask(store, task, this.id, done, retentionMs)));
      outcome = stored ? "completed" : "lost";
      if (stored && done.next && !done.next.failed) this.wakeOthers();
    } catch (err) {
      clearInterval(heartbeat);
      ended = true;
      const f = def.toFailure(err);
      code = f.code;
      tlog.warn({ code: f.code, reason: f.message }, `${name} attempt failed`);
      outcome = await failTask(
        store,
        task,
        this.id,
        { ...f, message: hidePaths(f.message, audio?.path ?? null) },
        retentionMs,
      );
      if (outcome === "retried") this.wakeOthers();
    } finally {
      this.abort = null;
      await audio?.release();
    }

    const elapsed = (Date.now() - started) / 1000;
    recordAttempt(task.kind, outcome, elapsed, job?.audio_s ?? null, outcome === "lost" ? undefined : code);
    if (outcome === "lost") {
      tlog.warn("lease lost before the outcome was recorded; result discarded (another worker owns the task)");
      return;
    }
    if (outcome === "completed")
      tlog.info({ elapsed_s: elapsed, rtf: job?.audio_s ? elapsed / job.audio_s : null }, `${name} completed`);
    else tlog.info({ outcome }, `${name} attempt recorded`);
    if (outcome === "retried") return;
    if (KINDS[task.kind].endsJob) this.deps.onFinal?.(task.job_id);
    // The outcome is recorded; cleaning up after it is not part of it: a failure here is logged, and the orphan
    // sweep removes the audio later.
    if (job?.blob_key)
      await this.removeAudioWhenDone(task.job_id, job.blob_key).catch((err: Error) =>
        tlog.warn({ err: err.message }, "audio removal failed; the orphan sweep will remove it"),
      );
  }

  /** The audio is kept while any task of the job may still need it (a queued refinement re-decodes it). */
  private async removeAudioWhenDone(jobId: string, blobKey: string): Promise<void> {
    if (!(await hasPendingTasks(this.deps.store, jobId))) await this.deps.blobs.remove(blobKey);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** A sleep that does not keep the process alive (shutdown waits). */
const unrefSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
