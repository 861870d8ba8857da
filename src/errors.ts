// The one registry of error codes: the wire codes with their HTTP status and default message, the codes a failed
// job or refinement reports, and the engine's own codes. docs/errors.md lists the same tables, and
// test/unit/docs.unit.test.ts checks that every code here is documented there.

export const ERROR_CODES = {
  H0001: { status: 400, msg: "invalid parameter" },
  H0002: { status: 401, msg: "invalid token" },
  H0003: { status: 403, msg: "forbidden" },
  H0004: { status: 404, msg: "not found" },
  H0005: { status: 413, msg: "file size exceeded" },
  H0006: { status: 413, msg: "file length exceeded" },
  H0007: { status: 410, msg: "result expired" },
  H0010: { status: 400, msg: "unsupported file type" },
  A0001: { status: 429, msg: "usage exceeded" },
  A0002: { status: 429, msg: "concurrency exceeded" },
  A0003: { status: 429, msg: "rate limited" },
  E500: { status: 500, msg: "server error" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** `error.code` of a failed job: the submit codes of the same meaning (src/jobs/failure.ts maps to them). */
export const JOB_FAILURE_CODES = ["H0010", "H0006", "E500"] as const satisfies readonly ErrorCode[];
export type JobFailureCode = (typeof JOB_FAILURE_CODES)[number];

/** `refine_error.code` of a failed refinement (docs/enterprise.md). */
export const REFINE_ERROR_CODES = ["refiner_enqueue_failed", "refiner_input_unavailable", "refiner_failed"] as const;
export type RefineErrorCode = (typeof REFINE_ERROR_CODES)[number];

/** The code a failed task of any kind records: a transcription's or a refinement's. */
export type TaskFailureCode = JobFailureCode | RefineErrorCode;

/** The engine's codes (docs/engine.md); the last two are raised on the TypeScript side, when the process died or
 * stopped answering. They never reach a client: src/jobs/failure.ts maps them. */
export const ENGINE_ERROR_CODES = [
  "bad_request",
  "audio_decode_failed",
  "audio_too_long",
  "model_load_failed",
  "internal",
  "cancelled",
  "engine_crashed",
  "engine_timeout",
] as const;
export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number];

/** An error that reaches the client as `{"code","msg"}` with the registry's HTTP status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, msg?: string) {
    super(msg ?? ERROR_CODES[code].msg);
    this.code = code;
    this.status = ERROR_CODES[code].status;
  }

  toBody(): { code: ErrorCode; msg: string } {
    return { code: this.code, msg: this.message };
  }
}

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;
