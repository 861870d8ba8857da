// The model registry: API model name → CTranslate2 model directory and decoding settings. Defaults come from the
// measurements in docs/models.md; SORI_MODELS_FILE (JSON, same shape) overrides any entry, so a GPU host can point
// `whisper` at a larger model without code changes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { projectRoot } from "../config.js";
import type { ModelSpec } from "./protocol.js";

export type ModelName = "sommers" | "whisper";

const EntrySchema = z.object({
  path: z.string().min(1),
  device: z.enum(["cpu", "cuda", "auto"]).default("cpu"),
  compute_type: z.string().default("int8"),
  beam_size: z.number().int().min(1).max(20).default(1),
  cpu_threads: z.number().int().min(0).default(0),
  // Batched passes of the model at once in a batch engine (CTranslate2's inter_threads); unset: the host's layout.
  inter_threads: z.number().int().min(1).max(64).optional(),
  vad: z.boolean().default(true),
  // Decoding options that override the entry's preset (field names and ranges: the engine's DecodeOptions).
  decode: z.record(z.string(), z.number()).optional(),
});
// An operator's diarization models (ONNX) in place of segmentation-3.0 and CAM++, and the settings for them: what
// each field means and what a model must take and give, docs/diarization.md ("Bring your own models"); the engine
// checks the rest (engine/sori_engine/diarization/models/custom.py).
const DiarizationModelSchema = z
  .object({
    path: z.string().min(1),
    sample_rate: z.union([z.literal(8000), z.literal(16000)]).optional(),
    chunk_s: z.number().positive().optional(),
    frame_step_s: z.number().positive().optional(),
    frame_duration_s: z.number().positive().optional(),
  })
  .strict();
const DiarizationSchema = z
  .object({
    segmentation: DiarizationModelSchema.optional(),
    embedding: DiarizationModelSchema.omit({ chunk_s: true, frame_step_s: true, frame_duration_s: true })
      .strict()
      .optional(),
    options: z.record(z.string(), z.number()).optional(),
  })
  .strict();
const FileSchema = z.object({
  sommers: EntrySchema.optional(),
  whisper: EntrySchema.optional(),
  diarization: DiarizationSchema.optional(),
});

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
  runEngineCheck(file, "sori_engine.decode_options", overrides, python);
}

/**
 * The engine environment for SORI_MODELS_FILE's `diarization` object (SORI_DIARIZATION_MODELS, its paths resolved
 * against the file's directory), or none for the built-in models. Each model is loaded and run once here, so that a
 * model of the wrong shape or rate, or an unknown option, stops the start with an error naming it.
 */
export function loadDiarizationModels(file?: string, python?: string): Record<string, string> {
  if (!file) return {};
  const parsed = FileSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  const d = parsed.data.diarization;
  if (!d) return {};
  const resolved = (m?: { path: string }) => (m ? { ...m, path: path.resolve(path.dirname(file), m.path) } : undefined);
  const models = { segmentation: resolved(d.segmentation), embedding: resolved(d.embedding), options: d.options };
  runEngineCheck(file, "sori_engine.diarization.check_models", models, python);
  return { SORI_DIARIZATION_MODELS: JSON.stringify(models) };
}

function runEngineCheck(file: string, module: string, arg: object, python?: string): void {
  try {
    execFileSync(python ?? path.join(projectRoot, ".venv", "bin", "python"), ["-m", module, JSON.stringify(arg)], {
      cwd: path.join(projectRoot, "engine"),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const out = (err as { stdout?: string }).stdout?.trim();
    throw new Error(`${file}: ${out || (err as Error).message}`);
  }
}
