// A client that writes its whole upload before it reads the answer: Python's urllib (test/http/clients/write_first.py),
// as the early-refusal tests drive it against `sori serve` and against the container (test/image/check.ts).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT } from "./server.js";

const CLIENT = path.join(ROOT, "test/http/clients/write_first.py");
export const MB = 1_000_000;

/** What urllib read: the answer, or the transport error it got instead. */
export function writeFirst(
  url: string,
  bytes: number,
  token?: string,
): { status?: number; body?: { code: string; msg: string }; error?: string } {
  const r = spawnSync("python3", [CLIENT, `${url}/v1/transcribe`, String(bytes), ...(token ? [token] : [])], {
    encoding: "utf8",
    timeout: 90_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
