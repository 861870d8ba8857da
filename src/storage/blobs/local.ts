// Blobs as files in <data dir>/blobs: the default, for one host or for hosts sharing that directory on a mount.
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { BLOB_KEY, BlobNotFoundError, checkKey, newBlobKey } from "./keys.js";
import { byteLimit } from "./limit.js";
import type { BlobStore } from "./types.js";

export function localBlobStore(dataDir: string): BlobStore {
  const dir = path.join(dataDir, "blobs");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pathOf = (key: string): string => path.join(dir, checkKey(key));

  const put = async (source: Readable, opts: { maxBytes?: number } = {}): Promise<{ key: string; bytes: number }> => {
    const key = newBlobKey();
    const counter = byteLimit(opts.maxBytes);
    try {
      await pipeline(source, counter, fs.createWriteStream(pathOf(key), { mode: 0o600, flags: "wx" }));
    } catch (err) {
      await fs.promises.rm(pathOf(key), { force: true });
      throw err;
    }
    return { key, bytes: counter.bytes };
  };

  return {
    kind: "local",
    put,
    async adopt(filePath) {
      const key = newBlobKey();
      try {
        const { size } = await fs.promises.stat(filePath);
        await fs.promises.rename(filePath, pathOf(key));
        return { key, bytes: size };
      } catch (err) {
        // The spool and the blobs directory on different file systems: copy, then drop the spool file.
        if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
        try {
          return await put(fs.createReadStream(filePath));
        } finally {
          await fs.promises.rm(filePath, { force: true });
        }
      }
    },
    async open(key) {
      const file = pathOf(key);
      await fs.promises.access(file).catch(() => {
        throw new BlobNotFoundError();
      });
      return { path: file, release: async () => {} };
    },
    async remove(key) {
      await fs.promises.rm(pathOf(key), { force: true });
    },
    async listOlderThan(olderThanMs, now = Date.now()) {
      const old: string[] = [];
      for (const name of await fs.promises.readdir(dir)) {
        if (!BLOB_KEY.test(name)) continue;
        const st = await fs.promises.stat(path.join(dir, name)).catch(() => null);
        if (st && now - st.mtimeMs > olderThanMs) old.push(name);
      }
      return old;
    },
    async close() {},
  };
}
