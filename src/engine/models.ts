// The model registry: API model name → CTranslate2 model directory and decoding settings. Defaults come from the
// measurements in docs/models.md; SORI_MODELS_FILE (JSON, same shape) overrides any entry, so a GPU host can point
// `whisper` at a larger model without code changes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { MAX_WORKERS, projectRoot } from "../config.js";
import type { ModelSpec } from "./protocol.js";

export type ModelName = "sommers" | "whisper";

const EntrySchema = z.object({
  path: z.string().min(1),
  device: z.enum(["cpu", "cuda", "auto"]).default("cpu"),
  compute_type: z.string().default("int8"),
  beam_size: z.number().int().min(1).max(20).default(1),
  cpu_threads: z.number().int().min(0).default(0),
  vad: z.boolean().default(true),
  // Decoding options that override the entry's preset (field names and ranges: the engine's DecodeOptions).
  decode: z.record(z.string(), z.number()).optional(),
});
const FileSchema = z.object({ sommers: EntrySchema.optional(), whisper: EntrySchema.optional() });

export type ModelRegistry = Record<ModelName, ModelSpec>;

const BASE_ENTRY = { device: "cpu", compute_type: "int8", cpu_threads: 0, vad: true } as const;

export function defaultRegistry(modelsDir: string): ModelRegistry {
  const base = path.join(modelsDir, "whisper-base");
  return {
    sommers: { ...BASE_ENTRY, path: base, beam_size: 5, decode: { preset: "sommers" } },
    whisper: { ...BASE_ENTRY, path: base, beam_size: 1, decode: { preset: "whisper" } },
  };
}

/**
 * SORI_ENGINE_JOBS when it is not set: 4 where a batch model runs on a GPU (one model copy, its clips in shared
 * batches), 1 on a CPU host, where workers sharing one engine were slower than an engine each: 2 workers on the
 * small mix through `sori serve`, 2 cores, 87 s wall and 133 CPU s sharing against 63 s and 121 s apart
 * (docs/performance.md, "Settings chosen").
 */
export function engineJobsFor(registry: ModelRegistry): number {
  return onGpu(registry) ? 4 : 1;
}

/** A batch model of the registry runs on a GPU. */
function onGpu(registry: ModelRegistry): boolean {
  return registry.sommers.device === "cuda" || registry.whisper.device === "cuda";
}

const CT2_DEFAULT_THREADS = 4;

/**
 * The registry as a host with `engines` batch engines runs it. CTranslate2's default for `cpu_threads` 0 is 4
 * threads per engine whatever the cores: an entry left at 0 gets the host's cores shared among its engines instead
 * (at least one each; a single engine at most CTranslate2's 4). On 2 cores, 2 engines (a worker each) spent 383 CPU
 * s on the throughput mix at one thread each against 468 s at the default; one engine on a 5-minute call took 34 s
 * wall and 48 CPU s at 2 threads against 40 s and 54 s at 4 (docs/performance.md, "Settings chosen"). An explicit
 * value, and a GPU entry, are kept.
 */
export function forEngines(registry: ModelRegistry, engines: number, cores: number): ModelRegistry {
  if (engines <= 0) return registry;
  const shared = Math.max(1, Math.floor(cores / engines));
  return withCpuThreads(registry, engines === 1 ? Math.min(CT2_DEFAULT_THREADS, shared) : shared);
}

/**
 * SORI_WORKERS when it is not set: the jobs in flight that fill the host. Where a model runs on a GPU, the jobs of
 * one engine (`engineJobs`), whose clips share its batches; on a CPU host, a worker per core, each with an engine of
 * its own on one thread (forEngines), at most one per GiB of memory (an engine holds 0.5-0.7 GB with a job in
 * flight). On 2 cores the small throughput mix took 64 s wall and 122 CPU s with 2 workers against 142 s and 146 s
 * with 1 (docs/performance.md, "Settings chosen").
 */
export function defaultWorkers(
  registry: ModelRegistry,
  engineJobs: number,
  cores: number,
  memoryBytes: number,
): number {
  if (onGpu(registry)) return engineJobs;
  return Math.max(1, Math.min(cores, Math.floor(memoryBytes / 1024 ** 3), MAX_WORKERS));
}

/**
 * The registry as a streaming engine runs it: an entry left at 0 gets one thread. A streaming decode is one short
 * utterance, or a few sessions' interims, and on a 2-core host CTranslate2's threads only wait on each other there:
 * a 13 s final at beam 5 took 1.08 s wall and 1.18 CPU s on one thread against 1.25 s and 1.69 s on two, and one
 * session through `sori serve` spent 43.5 CPU s on the 69 s dialogue instead of 52 with its first interim's p95 at
 * 1.18-1.25 s instead of 1.23-1.72 (docs/streaming.md, "One thread per stream engine"). A host with more cores runs
 * more stream engines (SORI_STREAM_ENGINES), each on a thread of its own. An explicit value, and a GPU entry, are
 * kept.
 */
export function forStreamEngines(registry: ModelRegistry): ModelRegistry {
  return withCpuThreads(registry, 1);
}

function withCpuThreads(registry: ModelRegistry, threads: number): ModelRegistry {
  const out = { ...registry };
  for (const name of ["sommers", "whisper"] as const) {
    if (out[name].cpu_threads === 0 && out[name].device !== "cuda") out[name] = { ...out[name], cpu_threads: threads };
  }
  return out;
}

/**
 * The registry with SORI_MODELS_FILE's entries in place of the built-in ones. Each entry decodes with its preset
 * and the `decode` fields it overrides, checked here by the engine's own rules (`python`), so that a misspelt field
 * or a bad value stops the start with an error naming it.
 */
export function loadModelRegistry(modelsDir: string, file?: string, python?: string): ModelRegistry {
  const registry = defaultRegistry(modelsDir);
  if (!file) return registry;
  const parsed = FileSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues[0]?.message}`);
  const overrides: Record<string, Record<string, number>> = {};
  for (const name of ["sommers", "whisper"] as const) {
    const entry = parsed.data[name];
    if (!entry) continue;
    if (entry.decode) overrides[name] = entry.decode;
    registry[name] = {
      ...entry,
      path: path.resolve(path.dirname(file), entry.path),
      decode: { ...entry.decode, preset: name },
    };
  }
  if (Object.keys(overrides).length > 0) checkDecodeOptions(file, overrides, python);
  return registry;
}

function checkDecodeOptions(file: string, overrides: object, python?: string): void {
  try {
    execFileSync(
      python ?? path.join(projectRoot, ".venv", "bin", "python"),
      ["-m", "sori_engine.decode.options", JSON.stringify(overrides)],
      { cwd: path.join(projectRoot, "engine"), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
  } catch (err) {
    const out = (err as { stdout?: string }).stdout?.trim();
    throw new Error(`${file}: ${out || (err as Error).message}`);
  }
}
