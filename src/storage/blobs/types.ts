// What every blob store is (kept apart from index.ts, which picks one, so that the stores import no cycle).
import type { Readable } from "node:stream";

export type BlobStoreKind = "local" | "postgres" | "s3";

/** A blob as a local file the engine can read. For remote stores it is a private spool copy: call release(). */
export interface OpenedBlob {
  path: string;
  release(): Promise<void>;
}

export interface BlobStore {
  readonly kind: BlobStoreKind;
  /** Streams `source` into a new blob under a generated key. Over `maxBytes` it fails with BlobTooLargeError; a
   * failed or aborted put leaves nothing behind. */
  put(source: Readable, opts?: { maxBytes?: number }): Promise<{ key: string; bytes: number }>;
  /** Takes a local file (a spooled upload) into the store; the file is gone afterwards, stored or not. The local
   * store renames it (no copy). */
  adopt(filePath: string): Promise<{ key: string; bytes: number }>;
  /** The blob as a local file; BlobNotFoundError when there is no such blob. */
  open(key: string): Promise<OpenedBlob>;
  remove(key: string): Promise<void>;
  /** Keys of blobs older than `olderThanMs` (for the orphan sweep). */
  listOlderThan(olderThanMs: number, now?: number): Promise<string[]>;
  close(): Promise<void>;
}
