// A guard for multipart file parts. When the request body ends inside a file part before the route gets to that
// part (the body arrived while the route was awaiting something else), the parser has already destroyed the part's
// stream without an error, and piping it then waits forever: a hung request per truncated upload, found by
// test/security/abuse.test.ts. Such a body is malformed: 400 H0001.
import type { Readable } from "node:stream";
import { ApiError } from "../errors.js";

export function assertPartReadable(file: Readable): void {
  if (file.destroyed) throw new ApiError("H0001", "malformed multipart body: it ended inside the file part");
}

/** Stream errors that mean the body ended early, not that the server failed. */
export const isTruncatedBodyError = (err: unknown): boolean =>
  (err as { code?: string }).code === "ERR_STREAM_PREMATURE_CLOSE";
