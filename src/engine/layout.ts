// How a host runs its batch work: how many workers (jobs in flight), engine processes, transcriptions per engine,
// decoders per engine (batched passes at once), and the model settings that go with them. One function, so that
// `sori serve`, `sori worker` and the docs' settings table (docs/performance.md, "Settings chosen") agree.
import { MAX_WORKERS } from "../config.js";
import type { ModelRegistry } from "./models.js";

export interface Host {
  cores: number;
  memoryBytes: number;
}

/** What the operator set (SORI_WORKERS, SORI_ENGINE_JOBS, SORI_ENGINE_DECODERS); null: by the host. */
export interface Asked {
  workers: number | null;
  engineJobs: number | null;
  decoders: number | null;
}

export interface Layout {
  workers: number;
  engines: number;
  /** Transcriptions one engine runs at once (its SORI_ENGINE_JOBS). */
  engineJobs: number;
  /** Batched passes one engine decodes at once (its SORI_ENGINE_DECODERS; the models' `inter_threads`). */
  decoders: number;
  models: ModelRegistry;
}

/** Transcriptions in flight where a batch model runs on a GPU: one engine, their clips in shared batches. */
const GPU_ENGINE_JOBS = 4;
/** Memory a job in flight may take beside the one copy of the models, for the default worker count. */
const JOB_MEMORY_BYTES = 1024 ** 3;

/**
 * The host's layout. By default one engine for the host: on a CPU host a worker per core (at most one per GiB of
 * memory), all sharing one engine whose decoders are the host's cores, each decoder on one CTranslate2 thread
 * (CTranslate2's `inter_threads`, the weights held once), so that one long file alone spreads its windows over every
 * core and many jobs share the same decoders in batches; on a GPU host 4 jobs sharing one engine with one decoder.
 * Figures: docs/performance.md, "Settings chosen". An explicit worker or job count may make more engines; the
 * cores are then shared among them. A model entry's own `cpu_threads` or `inter_threads`, and a GPU entry's, are kept.
 */
export function hostLayout(registry: ModelRegistry, host: Host, asked: Asked): Layout {
  const gpu = onGpu(registry);
  const byMemory = Math.floor(host.memoryBytes / JOB_MEMORY_BYTES);
  const workers = asked.workers ?? (gpu ? (asked.engineJobs ?? GPU_ENGINE_JOBS) : clamp(host.cores, byMemory));
  const engineJobs = asked.engineJobs ?? (gpu ? GPU_ENGINE_JOBS : Math.max(1, workers));
  const engines = Math.ceil(workers / engineJobs);
  const decoders = asked.decoders ?? (gpu ? 1 : Math.max(1, Math.floor(host.cores / Math.max(1, engines))));
  return { workers, engines, engineJobs, decoders, models: withDecoders(registry, decoders) };
}

/**
 * Stream engines for a host (SORI_STREAM_ENGINES unset): one per core, at most one per session and 16, so that one
 * session's long final does not hold up the others' answers on one thread; 1 where a model runs on a GPU. On 2 cores,
 * 4 sessions beside a batch job, 2 engines against 1: finals p50 / p95 0.89 / 2.29 s against 1.75 / 5.38 s
 * (docs/streaming.md, "Figures"). Each holds its own copy of the model.
 */
export function streamEngines(registry: ModelRegistry, cores: number, sessions: number): number {
  return onGpu(registry) ? 1 : Math.max(1, Math.min(cores, sessions, 16));
}

function clamp(cores: number, byMemory: number): number {
  return Math.max(1, Math.min(cores, byMemory, MAX_WORKERS));
}

/** A batch model of the registry runs on a GPU. */
function onGpu(registry: ModelRegistry): boolean {
  return registry.sommers.device === "cuda" || registry.whisper.device === "cuda";
}

function withDecoders(registry: ModelRegistry, decoders: number): ModelRegistry {
  const out = { ...registry };
  for (const name of ["sommers", "whisper"] as const) {
    const entry = out[name];
    if (entry.device === "cuda") continue;
    out[name] = {
      ...entry,
      cpu_threads: entry.cpu_threads === 0 ? 1 : entry.cpu_threads,
      inter_threads: entry.inter_threads ?? decoders,
    };
  }
  return out;
}
