// Reads the environment once into a typed, validated config. Every knob is documented in docs/configuration.md.
import path from "node:path";
import { z } from "zod";

const GiB = 1024 ** 3;

const bool = z
  .enum(["1", "0", "true", "false", "yes", "no"])
  .transform((v) => v === "1" || v === "true" || v === "yes");

const EnvSchema = z.object({
  SORI_DATA_DIR: z.string().optional(),
  SORI_DATABASE_URL: z.string().optional(),
  SORI_HOST: z.string().default("127.0.0.1"),
  SORI_PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  SORI_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  SORI_PYTHON: z.string().optional(),
  SORI_MODELS_DIR: z.string().optional(),
  SORI_MODELS_FILE: z.string().optional(),
  SORI_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  SORI_TOKEN_TTL_S: z.coerce.number().int().min(60).default(6 * 3600),
  SORI_MAX_FILE_BYTES: z.coerce.number().int().min(1).default(2 * GiB),
  SORI_MAX_AUDIO_S: z.coerce.number().min(1).default(4 * 3600),
  SORI_RETENTION_S: z.coerce.number().min(1).default(3 * 24 * 3600),
  SORI_LEASE_S: z.coerce.number().min(1).default(60),
  SORI_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(3),
  SORI_POLL_MS: z.coerce.number().int().min(10).default(1000),
  SORI_SWEEP_S: z.coerce.number().min(1).default(60),
  SORI_DEFAULT_MAX_CONCURRENT: z.coerce.number().int().min(1).default(20),
  SORI_DEFAULT_QUOTA_S: z.coerce.number().min(0).default(100 * 3600),
  SORI_QUOTA_WINDOW_S: z.coerce.number().min(1).default(30 * 24 * 3600),
  SORI_DEFAULT_READ_RPS: z.coerce.number().min(0.01).default(5),
  SORI_DEFAULT_READ_BURST: z.coerce.number().int().min(1).default(20),
  SORI_AUTH_RPS: z.coerce.number().min(0.01).default(2),
  SORI_AUTH_BURST: z.coerce.number().int().min(1).default(10),
  SORI_ENGINE_TIMEOUT_FACTOR: z.coerce.number().min(0.1).default(4),
});

export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  host: string;
  port: number;
  workers: number;
  python: string;
  modelsDir: string;
  modelsFile: string | undefined;
  logLevel: z.infer<typeof EnvSchema>["SORI_LOG_LEVEL"];
  tokenTtlS: number;
  maxFileBytes: number;
  maxAudioS: number;
  retentionS: number;
  leaseS: number;
  maxAttempts: number;
  pollMs: number;
  sweepS: number;
  /** Per-client defaults; each client row may override them (sori clients create/update). */
  defaults: { maxConcurrent: number; quotaS: number; readRps: number; readBurst: number };
  quotaWindowS: number;
  authRps: number;
  authBurst: number;
  engineTimeoutFactor: number;
}

/** Project root: the folder that holds package.json (src/ or dist/ is one level below). */
export const projectRoot = path.resolve(import.meta.dirname, "..");

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid environment: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  const e = parsed.data;
  // The default is beside the code, not the working directory, so `bin/sori` finds the same store from anywhere.
  const dataDir = path.resolve(e.SORI_DATA_DIR ?? path.join(projectRoot, "data"));
  return {
    dataDir,
    databaseUrl: e.SORI_DATABASE_URL,
    host: e.SORI_HOST,
    port: e.SORI_PORT,
    workers: e.SORI_WORKERS,
    python: e.SORI_PYTHON ?? path.join(projectRoot, ".venv", "bin", "python"),
    modelsDir: path.resolve(e.SORI_MODELS_DIR ?? path.join(projectRoot, "models")),
    modelsFile: e.SORI_MODELS_FILE,
    logLevel: e.SORI_LOG_LEVEL,
    tokenTtlS: e.SORI_TOKEN_TTL_S,
    maxFileBytes: e.SORI_MAX_FILE_BYTES,
    maxAudioS: e.SORI_MAX_AUDIO_S,
    retentionS: e.SORI_RETENTION_S,
    leaseS: e.SORI_LEASE_S,
    maxAttempts: e.SORI_MAX_ATTEMPTS,
    pollMs: e.SORI_POLL_MS,
    sweepS: e.SORI_SWEEP_S,
    defaults: {
      maxConcurrent: e.SORI_DEFAULT_MAX_CONCURRENT,
      quotaS: e.SORI_DEFAULT_QUOTA_S,
      readRps: e.SORI_DEFAULT_READ_RPS,
      readBurst: e.SORI_DEFAULT_READ_BURST,
    },
    quotaWindowS: e.SORI_QUOTA_WINDOW_S,
    authRps: e.SORI_AUTH_RPS,
    authBurst: e.SORI_AUTH_BURST,
    engineTimeoutFactor: e.SORI_ENGINE_TIMEOUT_FACTOR,
  };
}
