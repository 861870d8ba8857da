// The model registry: API model name → CTranslate2 model directory and decoding settings. Defaults come from the
// measurements in docs/models.md; SORI_MODELS_FILE (JSON, same shape) overrides any entry, so a GPU host can point
// `whisper` at a larger model without code changes.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { ModelSpec } from "./protocol.js";

export type ModelName = "sommers" | "whisper";

const EntrySchema = z.object({
  path: z.string().min(1),
  device: z.enum(["cpu", "cuda", "auto"]).default("cpu"),
  compute_type: z.string().default("int8"),
  beam_size: z.number().int().min(1).max(20).default(1),
  cpu_threads: z.number().int().min(0).default(0),
  vad: z.boolean().default(true),
});
const FileSchema = z.object({ sommers: EntrySchema.optional(), whisper: EntrySchema.optional() });

export type ModelRegistry = Record<ModelName, ModelSpec>;

export function defaultRegistry(modelsDir: string): ModelRegistry {
  const base = path.join(modelsDir, "whisper-base");
  return {
    sommers: { path: base, device: "cpu", compute_type: "int8", beam_size: 5, cpu_threads: 0, vad: true },
    whisper: { path: base, device: "cpu", compute_type: "int8", beam_size: 1, cpu_threads: 0, vad: true },
  };
}

export function loadModelRegistry(modelsDir: string, file?: string): ModelRegistry {
  const registry = defaultRegistry(modelsDir);
  if (!file) return registry;
  const parsed = FileSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues[0]?.message}`);
  for (const name of ["sommers", "whisper"] as const) {
    const entry = parsed.data[name];
    if (entry) registry[name] = { ...entry, path: path.resolve(path.dirname(file), entry.path) };
  }
  return registry;
}
