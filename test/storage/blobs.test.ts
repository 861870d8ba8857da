// One contract, three blob stores (src/storage/blobs/): the local directory, PostgreSQL (a fresh database on the
// machine's server) and S3 (moto's S3-compatible server). Each half that cannot run here is skipped with the reason.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { HeadObjectCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { loadConfig } from "../../src/config.js";
import {
  BLOB_KEY,
  BlobNotFoundError,
  type BlobStore,
  BlobTooLargeError,
  openBlobStore,
} from "../../src/storage/blobs/index.js";
import { CHUNK_BYTES } from "../../src/storage/blobs/postgres.js";
import { spoolDir } from "../../src/storage/blobs/spool.js";
import { openStore, type Store } from "../../src/storage/db.js";
import {
  createPgDatabase,
  type PgDatabase,
  pgUnavailable,
  type S3Server,
  s3Unavailable,
  startS3,
} from "../helpers/scaleout.js";
import { tempDataDir } from "../helpers/server.js";

const MiB = 1024 * 1024;

/** `total` bytes of a repeatable pseudo-random pattern, produced 64 KiB at a time (never held whole). */
function pattern(total: number, seed = 1): Readable {
  let sent = 0;
  let block = createHash("sha256").update(String(seed)).digest();
  return new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const n = Math.min(64 * 1024, total - sent);
      const out = Buffer.alloc(n);
      for (let i = 0; i < n; i += 32) {
        block = createHash("sha256").update(block).digest();
        block.copy(out, i, 0, Math.min(32, n - i));
      }
      sent += n;
      this.push(out);
    },
  });
}

async function digest(stream: Readable): Promise<string> {
  const h = createHash("sha256");
  for await (const c of stream) h.update(c as Buffer);
  return h.digest("hex");
}

/** A source that sends `good` bytes and then fails, as a client that hangs up mid-upload. */
function failingAfter(good: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(randomBytes(good));
      } else this.destroy(new Error("client went away"));
    },
  });
}

interface Setup {
  blobs: BlobStore;
  dataDir: string;
  /** Store-specific checks of how a large blob was stored. */
  checkLarge?(key: string, bytes: number): Promise<void>;
  /** Store-specific check that nothing of an aborted put remains. */
  checkNoLeftovers?(): Promise<void>;
  close(): Promise<void>;
}

const pgSkip = await pgUnavailable();
const s3Skip = s3Unavailable();

const backends: [string, string | false, () => Promise<Setup>][] = [
  [
    "local",
    false,
    async () => {
      const dataDir = tempDataDir();
      const store = await openStore({ dataDir });
      const blobs = await openBlobStore(loadConfig({ SORI_DATA_DIR: dataDir }), store);
      return {
        blobs,
        dataDir,
        async checkNoLeftovers() {
          assert.deepEqual(fs.readdirSync(path.join(dataDir, "blobs")), [], "no partial file in blobs/");
        },
        async close() {
          await blobs.close();
          await store.close();
          fs.rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    "postgres",
    pgSkip ?? false,
    async () => {
      const db: PgDatabase = await createPgDatabase("sori_blobs");
      const dataDir = tempDataDir();
      let store: Store | null = null;
      try {
        store = await openStore({ databaseUrl: db.url, dataDir });
        const s = store;
        const blobs = await openBlobStore(
          loadConfig({ SORI_DATA_DIR: dataDir, SORI_DATABASE_URL: db.url, SORI_BLOB_STORE: "postgres" }),
          s,
        );
        const rows = (key?: string) =>
          s.db
            .withTables<{ blob_chunks: { blob_key: string; seq: number; bytes: Buffer } }>()
            .selectFrom("blob_chunks")
            .select(["seq", (eb) => eb.fn<number>("octet_length", ["bytes"]).as("len")])
            .$if(key !== undefined, (q) => q.where("blob_key", "=", key!))
            .orderBy("seq")
            .execute();
        return {
          blobs,
          dataDir,
          async checkLarge(key, bytes) {
            const r = await rows(key);
            assert.equal(r.length, Math.ceil(bytes / CHUNK_BYTES), "one row per MiB");
            assert.ok(r.every((x, i) => x.seq === i && x.len <= CHUNK_BYTES));
          },
          async checkNoLeftovers() {
            assert.deepEqual(await rows(), [], "no chunk rows");
          },
          async close() {
            await blobs.close();
            await s.close();
            await db.drop();
            fs.rmSync(dataDir, { recursive: true, force: true });
          },
        };
      } catch (err) {
        await store?.close();
        await db.drop();
        throw err;
      }
    },
  ],
  [
    "s3",
    s3Skip ?? false,
    async () => {
      const s3: S3Server = await startS3();
      const dataDir = tempDataDir();
      const store = await openStore({ dataDir });
      const blobs = await openBlobStore(
        loadConfig({ SORI_DATA_DIR: dataDir, ...s3.env, SORI_S3_PREFIX: "audio/" }),
        store,
      );
      return {
        blobs,
        dataDir,
        async checkLarge(key) {
          const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `audio/${key}` }));
          // A multipart upload's ETag ends in -<parts>: the blob was streamed in 5 MiB parts.
          assert.match(head.ETag ?? "", /-\d+"?$/, `multipart ETag: ${head.ETag}`);
        },
        async checkNoLeftovers() {
          const mp = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }));
          assert.deepEqual(mp.Uploads ?? [], [], "no unfinished multipart upload");
        },
        async close() {
          await blobs.close();
          await store.close();
          await s3.stop();
          fs.rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  ],
];

for (const [label, skip, setup] of backends) {
  describe(`blob store: ${label}`, { skip }, () => {
    let s: Setup;
    const all = (): Promise<string[]> => s.blobs.listOlderThan(-3600_000); // every blob, whatever its age
    const spoolFiles = (): string[] =>
      fs.readdirSync(path.join(s.dataDir, "spool"), { withFileTypes: true }).map((d) => d.name);

    before(async () => {
      s = await setup();
      spoolDir(s.dataDir);
    });
    after(async () => {
      await s?.close();
    });

    it("puts a stream under a generated key and opens it as a local file with the same bytes", async () => {
      const a = await s.blobs.put(Readable.from([Buffer.from("hello "), Buffer.from("audio")]));
      const b = await s.blobs.put(Readable.from([Buffer.from("other")]));
      assert.match(a.key, BLOB_KEY);
      assert.notEqual(a.key, b.key);
      assert.equal(a.bytes, 11);
      const opened = await s.blobs.open(a.key);
      assert.equal(fs.readFileSync(opened.path, "utf8"), "hello audio");
      await opened.release();
      if (label !== "local") {
        assert.ok(opened.path.startsWith(path.join(s.dataDir, "spool")), "a remote blob is spooled under the data dir");
        assert.equal((fs.statSync(path.join(s.dataDir, "spool")).mode & 0o777).toString(8), "700");
        assert.ok(!fs.existsSync(opened.path), "the spool copy is gone after release");
      }
      assert.deepEqual(spoolFiles(), []);
      assert.deepEqual(new Set(await all()), new Set([a.key, b.key]));
      await s.blobs.remove(a.key);
      await s.blobs.remove(b.key);
    });

    it("keeps an empty blob apart from a missing one", async () => {
      const e = await s.blobs.put(Readable.from([]));
      assert.equal(e.bytes, 0);
      const opened = await s.blobs.open(e.key);
      assert.equal(fs.statSync(opened.path).size, 0);
      await opened.release();
      await s.blobs.remove(e.key);
      await assert.rejects(s.blobs.open(e.key), BlobNotFoundError);
      await s.blobs.remove(e.key); // removing twice is fine
      assert.deepEqual(spoolFiles(), [], "a failed open leaves no spool file");
    });

    it("refuses keys it did not generate", async () => {
      await assert.rejects(s.blobs.open("../../etc/passwd"), /invalid blob key/);
      await assert.rejects(s.blobs.remove("a/b"), /invalid blob key/);
    });

    it("adopts a spooled file: the blob has its bytes and the file is gone", async () => {
      const file = path.join(s.dataDir, "spool", "upload.tmp");
      fs.writeFileSync(file, "spooled upload");
      const { key, bytes } = await s.blobs.adopt(file);
      assert.equal(bytes, 14);
      assert.ok(!fs.existsSync(file));
      const opened = await s.blobs.open(key);
      assert.equal(fs.readFileSync(opened.path, "utf8"), "spooled upload");
      await opened.release();
      await s.blobs.remove(key);
    });

    it("streams a 12 MiB blob in and out in chunks, intact", async () => {
      const size = 12 * MiB + 12345;
      const before = process.memoryUsage().rss;
      const { key, bytes } = await s.blobs.put(pattern(size, 7));
      assert.equal(bytes, size);
      await s.checkLarge?.(key, size);
      const opened = await s.blobs.open(key);
      assert.equal(fs.statSync(opened.path).size, size);
      assert.equal(await digest(fs.createReadStream(opened.path)), await digest(pattern(size, 7)));
      await opened.release();
      await s.blobs.remove(key);
      await assert.rejects(s.blobs.open(key), BlobNotFoundError);
      // Loose: the point is "not the whole file several times over", not a precise budget.
      assert.ok(process.memoryUsage().rss - before < 200 * MiB);
    });

    it("cuts off a put over its size limit while streaming, leaving nothing behind", async () => {
      // 7 MiB against a 6 MiB limit: past S3's first 5 MiB part, so a multipart upload is under way when it fails.
      await assert.rejects(s.blobs.put(pattern(7 * MiB), { maxBytes: 6 * MiB }), BlobTooLargeError);
      assert.deepEqual(await all(), []);
      await s.checkNoLeftovers?.();
      // At the limit exactly is fine.
      const ok = await s.blobs.put(pattern(1000), { maxBytes: 1000 });
      assert.equal(ok.bytes, 1000);
      await s.blobs.remove(ok.key);
    });

    it("leaves nothing behind when the source fails mid-way", async () => {
      await assert.rejects(s.blobs.put(failingAfter(6 * MiB)), /client went away/);
      assert.deepEqual(await all(), []);
      await s.checkNoLeftovers?.();
    });

    it("lists blobs by age for the orphan sweep", async () => {
      const { key } = await s.blobs.put(Readable.from([Buffer.from("x")]));
      const now = Date.now();
      assert.deepEqual(await s.blobs.listOlderThan(3600_000, now), [], "a fresh blob is not old");
      assert.deepEqual(await s.blobs.listOlderThan(3600_000, now + 2 * 3600_000), [key]);
      await s.blobs.remove(key);
      assert.deepEqual(await s.blobs.listOlderThan(3600_000, now + 2 * 3600_000), []);
    });
  });
}

describe("blob store configuration", () => {
  it("refuses the PostgreSQL blob store without a PostgreSQL job store, and S3 without a bucket", () => {
    assert.throws(() => loadConfig({ SORI_BLOB_STORE: "postgres" }), /SORI_BLOB_STORE=postgres .*SORI_DATABASE_URL/);
    assert.throws(() => loadConfig({ SORI_BLOB_STORE: "s3" }), /SORI_S3_BUCKET/);
    assert.throws(() => loadConfig({ SORI_BLOB_STORE: "nfs" }), /SORI_BLOB_STORE/);
    assert.equal(loadConfig({}).blobs.kind, "local");
  });
});
