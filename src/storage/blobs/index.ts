// Audio blobs: where an accepted upload waits for its worker. Three interchangeable stores (docs/deployment.md):
// a local directory (the default; a shared mount in scale-out), PostgreSQL itself, or an S3-compatible bucket.
// Keys are always generated here, never taken from a request, so no path or object name comes from user input.
import type { Readable } from "node:stream";
import type { Config } from "../../config.js";
import type { Store } from "../db.js";
import { localBlobStore } from "./local.js";
import { postgresBlobStore } from "./postgres.js";
import { s3BlobStore } from "./s3.js";

export { BLOB_KEY, BlobNotFoundError, BlobTooLargeError, checkKey, newBlobKey } from "./keys.js";

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

/** The store the configuration names. The PostgreSQL store shares the job store's connection pool. */
export function openBlobStore(config: Config, store: Store): BlobStore {
  switch (config.blobs.kind) {
    case "local":
      return localBlobStore(config.dataDir);
    case "postgres":
      // loadConfig already refuses this without SORI_DATABASE_URL; this guards programmatic callers.
      if (store.dialect !== "postgres") throw new Error("SORI_BLOB_STORE=postgres needs the PostgreSQL job store (SORI_DATABASE_URL)");
      return postgresBlobStore(store, config.dataDir);
    case "s3":
      return s3BlobStore(config.blobs.s3, config.dataDir);
  }
}
