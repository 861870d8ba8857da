// Structured JSON logs (pino). Tokens and secrets are never logged: the Authorization header is redacted.
import { pino, type Logger } from "pino";

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "sori" },
    redact: ["req.headers.authorization", "headers.authorization", "client_secret", "access_token"],
  });
}
