// The process's Prometheus registry (prom-client). One per process, like pino's logger: workers, the pipeline and
// the HTTP error handler record into it with plain function calls, and GET /metrics renders it.
// No label ever carries a client id, job id or any job content: labels are fixed, small sets (kind, state,
// stage, outcome, code), so the exposition is safe to scrape without a token and its cardinality stays bounded.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

// Short clips finish in well under a second of engine time; long recordings take many minutes.
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** Set at scrape time from the store (src/metrics/queue.ts), so it is right whichever process changed the rows. */
export const queueJobs = new Gauge({
  name: "sori_queue_jobs",
  help: "Tasks in the store by kind and state (queued: waiting, including retries in backoff; running: claimed)",
  labelNames: ["kind", "state"] as const,
  registers: [registry],
});

export const jobDuration = new Histogram({
  name: "sori_job_duration_seconds",
  help: "Wall time of one task attempt in a worker, from claim to its recorded outcome",
  labelNames: ["kind", "outcome"] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

export const jobQueueWait = new Histogram({
  name: "sori_job_queue_wait_seconds",
  help: "Time from a task's creation (a job's submission, a refinement's start) to its first claim by a worker",
  labelNames: ["kind"] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

export const stageDuration = new Histogram({
  name: "sori_stage_duration_seconds",
  help: "Wall time of one pipeline stage of a job",
  labelNames: ["stage"] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

export const audioSeconds = new Counter({
  name: "sori_audio_seconds_processed_total",
  help: "Seconds of audio of the jobs completed by this process's workers",
  registers: [registry],
});

export const realTimeFactor = new Histogram({
  name: "sori_job_real_time_factor",
  help: "Wall time of a completed job attempt divided by its audio duration (lower is faster)",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
  registers: [registry],
});

export const errors = new Counter({
  name: "sori_errors_total",
  help: "Errors by code: refused API requests (source=api), failed transcription attempts (source=job) and failed attempts of other task kinds (source=the kind)",
  labelNames: ["source", "code"] as const,
  registers: [registry],
});

// Streaming recognition (docs/streaming.md). Latencies are wall time from the audio position an answer waited for
// (speech start for the first interim, the end point for a final) having been received to the answer being sent.
const LATENCY_BUCKETS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];

export const streamSessions = new Gauge({
  name: "sori_stream_sessions",
  help: "Streaming sessions open on this host",
  registers: [registry],
});

export const streamSessionsTotal = new Counter({
  name: "sori_stream_sessions_total",
  help: "Streaming sessions by how they ended (completed: after EOS; else the close reason's code)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const streamAudioSeconds = new Counter({
  name: "sori_stream_audio_seconds_total",
  help: "Seconds of audio received by streaming sessions",
  registers: [registry],
});

export const streamLatency = new Histogram({
  name: "sori_stream_latency_seconds",
  help: "Streaming answer latency: first interim after speech start, final after the end point",
  labelNames: ["kind"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const insightFailures = new Counter({
  name: "sori_insight_failures_total",
  help: "Jobs that asked for insight and got an empty insight, by reason (timeout, empty_transcript, invalid_answer, backend_error, not_configured).",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export type Stage = "transcribe" | "diarize" | "speakers" | "text" | "pii" | "redacted_audio" | "insight" | "store";
