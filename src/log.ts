// Structured JSON logs (pino). Tokens and secrets are never logged: the Authorization header, cookies and every
// field named like a credential are redacted, at the top level and one level down (pino's `*` matches one key).
// Job log lines carry `job_id` and `client_id` (docs/observability.md).
import { type DestinationStream, type Logger, pino } from "pino";

const SECRET_KEYS = [
  "client_secret",
  "access_token",
  "secret",
  "token",
  "password",
  "api_key",
  "apiKey",
  "authorization",
];

export const REDACT_PATHS = [
  "headers.authorization",
  "headers.cookie",
  // req.headers, and @fastify/multipart's trace line of its busboy options, which holds the request headers.
  "*.headers.authorization",
  "*.headers.cookie",
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "sori" },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    destination,
  );
}
