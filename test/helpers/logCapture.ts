// A pino logger whose records a test reads back: the worker's decisions (lease lost, resumed, attempt failed) are
// logged, not returned.
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

export type LogRecord = Record<string, unknown>;

/** A debug-level logger and the array its records (parsed JSON) are pushed to, in order. */
export function captureLog(): { log: Logger; logs: LogRecord[] } {
  const logs: LogRecord[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _e, cb) => {
      logs.push(JSON.parse(chunk.toString()) as LogRecord);
      cb();
    },
  });
  return { log: pino({ level: "debug" }, sink), logs };
}
