// Audio blobs on local disk (a shared mount in scale-out). Keys are generated here, never taken from a request,
// so no path is ever built from user input.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export interface BlobStore {
  /** A fresh key and the absolute path to write the upload to. */
  allocate(): { key: string; path: string };
  pathOf(key: string): string;
  remove(key: string): Promise<void>;
  /** Keys of blobs older than `olderThanMs` (for the orphan sweep). */
  listOlderThan(olderThanMs: number, now?: number): Promise<string[]>;
}

const KEY = /^[A-Za-z0-9_-]{22}$/;

export function localBlobStore(dataDir: string): BlobStore {
  const dir = path.join(dataDir, "blobs");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pathOf = (key: string): string => {
    if (!KEY.test(key)) throw new Error(`invalid blob key`);
    return path.join(dir, key);
  };
  return {
    allocate() {
      const key = randomBytes(16).toString("base64url");
      return { key, path: pathOf(key) };
    },
    pathOf,
    async remove(key) {
      await fs.promises.rm(pathOf(key), { force: true });
    },
    async listOlderThan(olderThanMs, now = Date.now()) {
      const names = await fs.promises.readdir(dir);
      const old: string[] = [];
      for (const name of names) {
        if (!KEY.test(name)) continue;
        const st = await fs.promises.stat(path.join(dir, name)).catch(() => null);
        if (st && now - st.mtimeMs > olderThanMs) old.push(name);
      }
      return old;
    },
  };
}
