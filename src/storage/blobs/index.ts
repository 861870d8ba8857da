// Audio blobs: where an accepted upload waits for its worker. Three interchangeable stores (docs/deployment.md):
// a local directory (the default; a shared mount in scale-out), PostgreSQL itself, or an S3-compatible bucket.
// Keys are always generated here, never taken from a request, so no path or object name comes from user input.
import type { Config } from "../../config.js";
import type { Store } from "../db.js";
import { localBlobStore } from "./local.js";
import { postgresBlobStore } from "./postgres.js";
import type { BlobStore } from "./types.js";

export { BLOB_KEY, BlobNotFoundError, BlobTooLargeError, checkKey, newBlobKey } from "./keys.js";
export type { BlobStore, BlobStoreKind, OpenedBlob } from "./types.js";

/** The store the configuration names. The PostgreSQL store shares the job store's connection pool. The S3 store is
 * loaded only when named: the AWS SDK costs every other deployment its start-up time and memory for nothing. */
export async function openBlobStore(config: Config, store: Store): Promise<BlobStore> {
  switch (config.blobs.kind) {
    case "local":
      return localBlobStore(config.dataDir);
    case "postgres":
      // loadConfig already refuses this without SORI_DATABASE_URL; this guards programmatic callers.
      if (store.dialect !== "postgres")
        throw new Error("SORI_BLOB_STORE=postgres needs the PostgreSQL job store (SORI_DATABASE_URL)");
      return postgresBlobStore(store, config.dataDir);
    case "s3":
      return (await import("./s3.js")).s3BlobStore(config.blobs.s3, config.dataDir);
  }
}
