// Row types of the job store, shared by SQLite and PostgreSQL. Times are integer epoch milliseconds.
import type { Generated } from "kysely";

export type JobState = "queued" | "running" | "completed" | "failed";

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

export interface JobsTable {
  /** Submission order: claims take the lowest seq first. */
  seq: Generated<number>;
  id: string;
  client_id: string;
  state: JobState;
  config: string;
  blob_key: string | null;
  file_format: string;
  audio_s: number | null;
  attempts: number;
  max_attempts: number;
  run_at: number;
  locked_by: string | null;
  lease_until: number | null;
  progress: number;
  result: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  expires_at: number | null;
  expired: number;
  /** Set by DELETE /v1/transcribe/{id} (migration 003): the row stays for quota accounting, reads answer 404. */
  deleted_at: number | null;
  /** Refinement phase (migration 002, docs/enterprise.md): null when refinement was not requested. */
  refine_status: RefineStatus | null;
  /** JSON `{utterances}` once refine_status is completed. */
  refine_result: string | null;
  /** refiner_enqueue_failed | refiner_input_unavailable | refiner_failed once refine_status is failed. */
  refine_error: string | null;
  refine_locked_by: string | null;
  refine_lease_until: number | null;
  refine_attempts: number | null;
  /** Why insight generation failed (logs and operators only; the read shows `insight: []`). */
  insight_error: string | null;
}

export interface Database {
  clients: ClientsTable;
  jobs: JobsTable;
}
