// Blobs in an S3-compatible bucket through the AWS SDK. Credentials come from the SDK's default chain
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role...), never from our config or our logs.
import fs from "node:fs";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { BLOB_KEY, BlobNotFoundError, checkKey, newBlobKey } from "./keys.js";
import { byteLimit } from "./limit.js";
import { adoptByPut, spoolPath } from "./spool.js";
import type { BlobStore } from "./types.js";

export interface S3Settings {
  bucket: string;
  endpoint: string | undefined;
  region: string | undefined;
  /** Object names are `<prefix><key>`; lets one bucket serve several deployments. */
  prefix: string;
  /** Path-style URLs (http://host/bucket/key), which most self-hosted S3 servers need. */
  forcePathStyle: boolean;
}

/** Multipart part size: S3's minimum; the SDK buffers up to queueSize parts, so memory stays at ~10 MiB per upload. */
const PART_BYTES = 5 * 1024 * 1024;

const notFound = (err: unknown): boolean =>
  err instanceof S3ServiceException &&
  (err.name === "NoSuchKey" || err.name === "NotFound" || err.$metadata?.httpStatusCode === 404);

export function s3BlobStore(s: S3Settings, dataDir: string): BlobStore {
  const client = new S3Client({
    // The SDK insists on a region; an S3-compatible server usually ignores it.
    region: s.region ?? process.env.AWS_REGION ?? "us-east-1",
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    forcePathStyle: s.forcePathStyle,
  });
  const name = (key: string): string => s.prefix + checkKey(key);

  const put = async (source: Readable, opts: { maxBytes?: number } = {}): Promise<{ key: string; bytes: number }> => {
    const key = newBlobKey();
    const counter = byteLimit(opts.maxBytes);
    // The upload reads the counter; the source is piped into it so that a failing source fails the upload too.
    const feeding = pipeline(source, counter);
    const upload = new Upload({
      client,
      params: { Bucket: s.bucket, Key: name(key), Body: counter, ContentType: "application/octet-stream" },
      partSize: PART_BYTES,
      queueSize: 2,
      // A failed multipart upload is aborted, so that no parts are left behind to be billed.
      leavePartsOnError: false,
    });
    // A failed upload stops the feeding; a failed feeding ends the upload's reads, and `done()` then settles only after
    // lib-storage has sent AbortMultipartUpload (leavePartsOnError false). Both are awaited before the error is
    // thrown: `upload.abort()` would settle `done()` at once and leave that abort racing in the background (an
    // unfinished multipart upload, billed, seen by CI).
    const uploading = upload.done().catch((err: unknown) => {
      counter.destroy(err instanceof Error ? err : new Error(String(err)));
      throw err;
    });
    const [fed, uploaded] = await Promise.allSettled([feeding, uploading]);
    const failure = fed.status === "rejected" ? fed.reason : uploaded.status === "rejected" ? uploaded.reason : null;
    if (failure !== null) {
      // A single-part upload may have completed before the source failed; make sure nothing stays.
      await client.send(new DeleteObjectCommand({ Bucket: s.bucket, Key: name(key) })).catch(() => {});
      throw failure;
    }
    return { key, bytes: counter.bytes };
  };

  return {
    kind: "s3",
    put,
    adopt: (filePath) => adoptByPut(put, filePath),
    async open(key) {
      const file = spoolPath(dataDir, "engine");
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: s.bucket, Key: name(key) }));
        await pipeline(res.Body as Readable, fs.createWriteStream(file, { mode: 0o600 }));
      } catch (err) {
        await fs.promises.rm(file, { force: true });
        throw notFound(err) ? new BlobNotFoundError() : err;
      }
      return { path: file, release: () => fs.promises.rm(file, { force: true }) };
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: s.bucket, Key: name(key) }));
    },
    async listOlderThan(olderThanMs, now = Date.now()) {
      const old: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: s.bucket, Prefix: s.prefix, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) {
          const key = o.Key?.slice(s.prefix.length) ?? "";
          if (BLOB_KEY.test(key) && o.LastModified && now - o.LastModified.getTime() > olderThanMs) old.push(key);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return old;
    },
    async close() {
      client.destroy();
    },
  };
}
