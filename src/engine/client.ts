// Spawns the Python engine (`python -m sori_engine`) and speaks its JSON-lines protocol (docs/engine.md).
// Many requests may be in flight at once, each answered by its id: the engine runs up to SORI_ENGINE_JOBS
// transcriptions together, their clips decoded in shared batches, runs the ops that read a whole file beside them,
// and answers the others between two batched passes (docs/engine.md, "One engine for the host"). The requests in flight may belong to different jobs, so one request's
// end never takes the others down: an aborted request (its signal) or one past its time budget fails alone, at
// once, and the engine is told to drop it (`cancel`); a request past its budget also has the engine checked with a
// `ping`, and only an engine that does not answer it is killed. If the process dies, every request in flight fails
// with `engine_crashed` and the next request starts a fresh process.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { projectRoot } from "../config.js";
import {
  type DiarizeParams,
  type DiarizeResult,
  type EngineCheckpoint,
  EngineError,
  type ProbeResult,
  type RedactAudioParams,
  type RedactAudioResult,
  type TranscribeParams,
  type TranscribeResult,
  type VoiceprintParams,
  type VoiceprintResult,
} from "./protocol.js";
import type { RefineParams, RefineResult } from "./refineProtocol.js";
import type {
  StreamAudioParams,
  StreamAudioResult,
  StreamOpenParams,
  StreamStepParams,
  StreamStepResult,
} from "./streamProtocol.js";

export interface EngineOptions {
  python: string;
  /** Extra environment for the child (e.g. a CUDA device list). */
  env?: NodeJS.ProcessEnv;
  /** Receives the engine's stderr lines (its logs). */
  onLog?: (line: string) => void;
  startTimeoutMs?: number;
  /** Niceness of the engine process, added to this process's own (capped at 19). Decoding is batch work: on a host that also serves the API, a lower CPU
   * priority keeps reads answered in milliseconds while every core decodes (docs/configuration.md). */
  nice?: number;
  /** After a request ran past its time budget: how long the engine has to answer a `ping` before it is killed
   * (default 30 s; the engine answers a ping between two batched passes). */
  checkTimeoutMs?: number;
}

/** What a request may be given beside its params. */
interface RequestOptions {
  onProgress?: ((fraction: number) => void) | undefined;
  /** Each checkpoint event, when the params ask for them (`checkpoints: true`). */
  onCheckpoint?: ((checkpoint: EngineCheckpoint) => void) | undefined;
  /** Past this, the request fails with `engine_timeout` (the others in flight go on; see `timedOut`). */
  timeoutMs?: number | undefined;
  /** Aborting fails the request at once with `cancelled` and sends the engine `cancel` for it: a transcription is
   * dropped there (none of its clips decoded after), any other op's late answer is ignored. */
  signal?: AbortSignal | undefined;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: EngineError) => void;
  onProgress?: ((fraction: number) => void) | undefined;
  onCheckpoint?: ((checkpoint: EngineCheckpoint) => void) | undefined;
  /** Clears the request's timer and abort listener; called once, whichever way it ends. */
  done: () => void;
}

export class Engine {
  private child: ChildProcessWithoutNullStreams | null = null;
  private ready: Promise<void> | null = null;
  private pending = new Map<string, Pending>();
  private nextId = 1;
  /** The process whose `ping` check is under way (one at a time). */
  private checking: ChildProcessWithoutNullStreams | null = null;

  constructor(private readonly opts: EngineOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async transcribe(params: TranscribeParams, opts: RequestOptions = {}): Promise<TranscribeResult> {
    return (await this.request("transcribe", params, opts)) as TranscribeResult;
  }

  /** Re-decodes and scores utterance spans (docs/engine.md, `refine`; used by src/refine). */
  async refine(params: RefineParams, opts: Omit<RequestOptions, "onCheckpoint"> = {}): Promise<RefineResult> {
    return (await this.request("refine", params, opts)) as RefineResult;
  }

  /** Speaker turns of a file (docs/engine.md, `diarize`; used by src/diarization). */
  async diarize(params: DiarizeParams, opts: Omit<RequestOptions, "onCheckpoint"> = {}): Promise<DiarizeResult> {
    return (await this.request("diarize", params, opts)) as DiarizeResult;
  }

  /** Speaker embeddings of given speech (docs/engine.md, `voiceprint`; used by src/speakers). */
  async voiceprint(
    params: VoiceprintParams,
    opts: Omit<RequestOptions, "onCheckpoint"> = {},
  ): Promise<VoiceprintResult> {
    return (await this.request("voiceprint", params, opts)) as VoiceprintResult;
  }

  /** A copy of the audio with spans silenced or beeped (docs/engine.md, `redact_audio`; used by src/jobs/tasks/redactedAudio.ts). */
  async redactAudio(
    params: RedactAudioParams,
    opts: Pick<RequestOptions, "timeoutMs" | "signal"> = {},
  ): Promise<RedactAudioResult> {
    return (await this.request("redact_audio", params, opts)) as RedactAudioResult;
  }

  /** Streaming session ops (docs/engine.md, "Streaming"; used by src/streaming). */
  async streamOpen(params: StreamOpenParams, timeoutMs = 120_000): Promise<void> {
    await this.request("stream_open", params, { timeoutMs });
  }

  async streamAudio(params: StreamAudioParams, timeoutMs = 120_000): Promise<StreamAudioResult> {
    return (await this.request("stream_audio", params, { timeoutMs })) as StreamAudioResult;
  }

  async streamStep(params: StreamStepParams, timeoutMs = 120_000): Promise<StreamStepResult> {
    return (await this.request("stream_step", params, { timeoutMs })) as StreamStepResult;
  }

  async streamClose(session: string): Promise<void> {
    await this.request("stream_close", { session }, { timeoutMs: 30_000 });
  }

  /** Requests sent and not yet answered: a streaming pool gives a new session to its least busy engine. */
  get inFlight(): number {
    return this.pending.size;
  }

  async probe(audioPath: string, signal?: AbortSignal): Promise<ProbeResult> {
    return (await this.request("probe", { audio_path: audioPath }, { timeoutMs: 60_000, signal })) as ProbeResult;
  }

  async ping(): Promise<{ version: string; models_loaded: string[] }> {
    return (await this.request("ping", {}, { timeoutMs: 30_000 })) as { version: string; models_loaded: string[] };
  }

  /** Closes stdin (the engine exits 0) and waits; kills it if it does not leave in time. */
  async stop(graceMs = 5000): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.stdin.end();
    const t = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(t);
  }

  private async request(op: string, params: unknown, opts: RequestOptions): Promise<unknown> {
    await this.start();
    const signal = opts.signal;
    if (signal?.aborted) throw new EngineError("cancelled", `${op} cancelled before it was sent`);
    const child = this.child!;
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      const onAbort = () => this.drop(id, child, new EngineError("cancelled", `${op} cancelled`));
      const timer =
        opts.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.drop(
                id,
                child,
                new EngineError("engine_timeout", `engine did not answer ${op} within ${opts.timeoutMs} ms`),
              );
              this.check(child);
            }, opts.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, {
        resolve,
        reject,
        onProgress: opts.onProgress,
        onCheckpoint: opts.onCheckpoint,
        done: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        },
      });
      this.send(child, { id, op, params });
    });
  }

  /** Fails one request in flight at once and tells the engine to drop it; whatever it still answers is ignored. */
  private drop(id: string, child: ChildProcessWithoutNullStreams, err: EngineError): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.done();
    p.reject(err);
    // The cancel's own answer (`cancelled`: whether the engine still had it) matters to no one.
    this.send(child, { id: `cancel-${id}`, op: "cancel", params: { id } });
  }

  /**
   * A request ran past its budget: that may be the request (a file slower than its budget), or a hung engine. The
   * engine is asked for a `ping`; answered, it keeps serving the other requests in flight; not answered within
   * `checkTimeoutMs`, it is killed, and `exit` fails everything still in flight with `engine_crashed`.
   */
  private check(child: ChildProcessWithoutNullStreams): void {
    if (this.checking === child || this.child !== child) return;
    this.checking = child;
    const id = `check-${this.nextId++}`;
    const ms = this.opts.checkTimeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      this.opts.onLog?.(`engine did not answer a ping within ${ms} ms after a request timed out; killing it`);
      child.kill("SIGKILL");
    }, ms);
    const end = () => {
      clearTimeout(timer);
      if (this.checking === child) this.checking = null;
    };
    this.pending.set(id, { resolve: end, reject: end, done: () => {} });
    this.send(child, { id, op: "ping", params: {} });
  }

  private send(child: ChildProcessWithoutNullStreams, msg: { id: string; op: string; params: unknown }): void {
    // A process that has exited (or is being stopped) takes no more lines; its `exit` has failed what was in flight.
    if (this.child === child && child.stdin.writable) child.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const child = spawn(this.opts.python, ["-m", "sori_engine"], {
      cwd: path.join(projectRoot, "engine"),
      env: { ...process.env, ...this.opts.env, PYTHONUNBUFFERED: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    if (this.opts.nice && child.pid !== undefined) {
      try {
        // Relative to this process, so that a service started under `nice` keeps its engines below itself.
        os.setPriority(child.pid, Math.min(19, os.getPriority() + this.opts.nice));
      } catch (err) {
        this.opts.onLog?.(`cannot lower the engine's CPU priority: ${(err as Error).message}`);
      }
    }
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new EngineError("engine_crashed", "engine did not become ready in time"));
      }, this.opts.startTimeoutMs ?? 120_000);
      readline.createInterface({ input: child.stdout }).on("line", (line) => {
        let msg: {
          id?: string | null;
          event?: string;
          fraction?: number;
          checkpoint?: EngineCheckpoint;
          result?: unknown;
          error?: { code: string; message: string };
        };
        try {
          msg = JSON.parse(line);
        } catch {
          this.opts.onLog?.(`engine stdout (not protocol): ${line}`);
          return;
        }
        if (msg.event === "ready") {
          clearTimeout(timer);
          resolve();
          return;
        }
        const p = msg.id ? this.pending.get(msg.id) : undefined;
        if (!p) return;
        if (msg.event === "progress") {
          if (typeof msg.fraction === "number") p.onProgress?.(msg.fraction);
          return;
        }
        if (msg.event === "checkpoint") {
          if (msg.checkpoint && typeof msg.checkpoint === "object") p.onCheckpoint?.(msg.checkpoint);
          return;
        }
        this.pending.delete(msg.id!);
        p.done();
        if (msg.error) p.reject(new EngineError(msg.error.code as EngineError["code"], msg.error.message));
        else p.resolve(msg.result);
      });
      readline.createInterface({ input: child.stderr }).on("line", (line) => this.opts.onLog?.(line));
      // A line written as the process dies fails with EPIPE; its `exit` fails the requests in flight.
      child.stdin.on("error", (err) => this.opts.onLog?.(`engine stdin: ${err.message}`));
      child.on("error", (err) => {
        clearTimeout(timer);
        reject(new EngineError("engine_crashed", `cannot start engine (${this.opts.python}): ${err.message}`));
      });
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        const why = `engine exited (${signal ?? `code ${code}`})`;
        reject(new EngineError("engine_crashed", why));
        this.failAll(new EngineError("engine_crashed", why));
        if (this.child === child) {
          this.child = null;
          this.ready = null;
        }
      });
    });
    // Keep a failed start from being reported as an unhandled rejection before someone awaits it.
    this.ready.catch(() => {
      if (this.child === child) {
        this.child = null;
        this.ready = null;
      }
    });
    return this.ready;
  }

  private failAll(err: EngineError): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.done();
      p.reject(err);
    }
  }
}
