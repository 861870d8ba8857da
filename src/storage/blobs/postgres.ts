// Blobs in PostgreSQL itself (migration 004): no extra infrastructure for a scale-out deployment. A blob is a run
// of ~1 MiB rows, written and read one chunk at a time so that no file is ever held in memory whole.
import fs from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Store } from "../db.js";
import { BLOB_KEY, BlobNotFoundError, checkKey, newBlobKey } from "./keys.js";
import { byteLimit } from "./limit.js";
import { adoptByPut, spoolPath } from "./spool.js";
import type { BlobStore } from "./types.js";

/** Rows of about this size: small enough to keep memory flat, large enough that a 2 GiB file is ~2000 rows. */
export const CHUNK_BYTES = 1024 * 1024;

interface BlobChunkTable {
  blob_key: string;
  seq: number;
  bytes: Buffer;
  created_at: number;
}

export function postgresBlobStore(store: Store, dataDir: string): BlobStore {
  // The table is not part of the job store's typed schema: only this file reads or writes it.
  const db = store.db.withTables<{ blob_chunks: BlobChunkTable }>();

  const put = async (source: Readable, opts: { maxBytes?: number } = {}): Promise<{ key: string; bytes: number }> => {
    const key = newBlobKey();
    const counter = byteLimit(opts.maxBytes);
    const now = Date.now();
    // One transaction: a put that fails (over the limit, client gone, process killed) leaves no rows at all.
    await db.transaction().execute(async (trx) => {
      let seq = 0;
      const insert = (bytes: Buffer) =>
        trx.insertInto("blob_chunks").values({ blob_key: key, seq: seq++, bytes, created_at: now }).execute();
      await pipeline(source, counter, async (chunks: AsyncIterable<Buffer>) => {
        let pending: Buffer[] = [];
        let size = 0;
        for await (const chunk of chunks) {
          pending.push(chunk);
          size += chunk.length;
          while (size >= CHUNK_BYTES) {
            const all = Buffer.concat(pending, size);
            await insert(all.subarray(0, CHUNK_BYTES));
            pending = [all.subarray(CHUNK_BYTES)];
            size = all.length - CHUNK_BYTES;
          }
        }
        // Row 0 always exists, even for an empty blob: it is how open() tells "empty" from "not stored".
        if (size > 0 || seq === 0) await insert(Buffer.concat(pending, size));
      });
    });
    return { key, bytes: counter.bytes };
  };

  async function* chunksOf(key: string): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq++) {
      const row = await db
        .selectFrom("blob_chunks")
        .select("bytes")
        .where("blob_key", "=", key)
        .where("seq", "=", seq)
        .executeTakeFirst();
      if (!row) {
        if (seq === 0) throw new BlobNotFoundError();
        return;
      }
      yield row.bytes;
    }
  }

  return {
    kind: "postgres",
    put,
    adopt: (filePath) => adoptByPut(put, filePath),
    async open(key) {
      checkKey(key);
      const file = spoolPath(dataDir, "engine");
      try {
        await pipeline(Readable.from(chunksOf(key)), fs.createWriteStream(file, { mode: 0o600 }));
      } catch (err) {
        await fs.promises.rm(file, { force: true });
        throw err;
      }
      return { path: file, release: () => fs.promises.rm(file, { force: true }) };
    },
    async remove(key) {
      await db.deleteFrom("blob_chunks").where("blob_key", "=", checkKey(key)).execute();
    },
    async listOlderThan(olderThanMs, now = Date.now()) {
      const rows = await db
        .selectFrom("blob_chunks")
        .select("blob_key")
        .where("seq", "=", 0)
        .where("created_at", "<", now - olderThanMs)
        .execute();
      return rows.map((r) => r.blob_key).filter((k) => BLOB_KEY.test(k));
    },
    async close() {}, // the pool is the job store's, closed with it
  };
}
