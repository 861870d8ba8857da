// The one registry of wire error codes: HTTP status and default message. docs/errors.md lists the same table,
// and test/unit/docs.test.ts checks that every code here is documented there.

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
