// Row types of the job store, shared by SQLite and PostgreSQL. Times are integer epoch milliseconds.
import type { Generated } from "kysely";

export type JobState = "queued" | "running" | "completed" | "failed";

/** The spec's refine_status: the refine task's state, with `running` spelled `processing`. */
export type RefineStatus = "queued" | "processing" | "completed" | "failed";

export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string;
  tier: "standard" | "enterprise";
  /** Per-client limits; null means the server default. */
  max_concurrent: number | null;
  quota_s: number | null;
  read_rps: number | null;
  disabled: number;
  created_at: number;
}

/** A job's record: what was submitted and what its tasks produced. Where its work stands lives in `tasks`. */
export interface JobsTable {
  /** Submission order (the list pages by it); claims order the tasks by their own seq. */
  seq: Generated<number>;
  id: string;
  client_id: string;
  config: string;
  blob_key: string | null;
  file_format: string;
  audio_s: number | null;
  /** JSON results body, written when the transcribe task completes. */
  result: string | null;
  created_at: number;
  /** Set when the job became final (its transcribe task completed or failed): retention starts then. */
  expires_at: number | null;
  expired: number;
  /** Set by DELETE /v1/transcribe/{id} (migration 003): the row stays for quota accounting, reads answer 404. */
  deleted_at: number | null;
  /** JSON `{utterances}` once the refine task completed (docs/enterprise.md). */
  refine_result: string | null;
  /** Why insight generation failed (logs and operators only; the read shows `insight: []`). */
  insight_error: string | null;
  /** The redacted copy of the audio (migration 010, `pii_redaction.audio`, docs/pii.md): kept until the job expires
   * or is deleted. */
  redacted_blob_key: string | null;
}

/** What a task does; src/jobs/kinds.ts has the facts of each kind (priority, codes). */
export type TaskKind = "transcribe" | "refine";

export type TaskState = "queued" | "running" | "completed" | "failed";

/**
 * One unit of work of a job (migration 005), in the pattern of graphile-worker's jobs table: every kind has the
 * same lifecycle (src/storage/tasks.ts): claimed with a lease, fenced by `locked_by`, retried with backoff, reaped
 * when its worker dies. A job has at most one task of each kind.
 */
export interface TasksTable {
  /** Claim order within a priority; a retry keeps its seq, so it keeps its place. */
  seq: Generated<number>;
  job_id: string;
  kind: TaskKind;
  /** Lower runs first: a refinement is claimed only when no transcription waits. */
  priority: number;
  state: TaskState;
  attempts: number;
  max_attempts: number;
  run_at: number;
  locked_by: string | null;
  lease_until: number | null;
  progress: number;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** What the engine emitted after each window of a running task's audio (migration 007, src/storage/checkpoints.ts). */
export interface TaskCheckpointsTable {
  task_seq: number;
  /** The engine request within the task: the channel of a use_multi_channel job, else 0. */
  part: number;
  /** The window (0, 1, 2, ...). */
  idx: number;
  /** Where the next window starts, in seconds of the audio (logs and the benchmark's redone-work figure). */
  offset_s: number;
  /** The engine's checkpoint, as JSON (docs/engine.md). */
  data: string;
  created_at: number;
}

/** An open streaming session (migration 008): a client's session bound counts the rows its hosts keep alive. */
export interface StreamSessionsTable {
  id: string;
  client_id: string;
  /** Epoch ms of its host's last heartbeat. */
  seen_at: number;
}

/** Audio a client streamed, one row per ended streaming session (migration 008): the usage quota counts it. */
export interface StreamUsageTable {
  client_id: string;
  ended_at: number;
  audio_s: number;
}

/** A known speaker (migration 009, src/storage/speakers.ts): the voiceprint only, never audio. */
export interface SpeakersTable {
  id: string;
  client_id: string;
  name: string;
  /** The embedding model and recipe that made `embedding` (the engine's `voiceprint` op names it). */
  model: string;
  /** JSON array of numbers: the unit-norm voiceprint. */
  embedding: string;
  /** The same speech as a phone line passes it (migration 011); null for speakers enrolled before. */
  embedding_phone: string | null;
  /** Seconds of speech the voiceprint was made from. */
  speech_s: number;
  created_at: number;
  updated_at: number;
}

export interface Database {
  clients: ClientsTable;
  jobs: JobsTable;
  tasks: TasksTable;
  task_checkpoints: TaskCheckpointsTable;
  stream_sessions: StreamSessionsTable;
  stream_usage: StreamUsageTable;
  speakers: SpeakersTable;
}
