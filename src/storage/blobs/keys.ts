// Blob keys and the errors every store shares (kept apart from index.ts so that the stores import no cycle).
import { randomBytes } from "node:crypto";

export const BLOB_KEY = /^[A-Za-z0-9_-]{22}$/;

/** 128 random bits: unguessable, and safe as a file or object name. */
export const newBlobKey = (): string => randomBytes(16).toString("base64url");

export function checkKey(key: string): string {
  if (!BLOB_KEY.test(key)) throw new Error("invalid blob key");
  return key;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds the size limit of ${maxBytes} bytes`);
  }
}

export class BlobNotFoundError extends Error {
  constructor() {
    super("the blob is not stored");
  }
}
