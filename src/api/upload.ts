// Reads the submit's multipart body: the `config` text and the `file` part, which is streamed to a private spool
// file and never held in memory. The size limit is enforced while streaming; what is over it is not read. The
// caller inspects the spool file (format, duration) and only then moves it into the blob store, so that a refused
// upload never reaches a remote store (src/storage/blobs/, docs/deployment.md).
import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import type { FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { assertPartReadable, isTruncatedBodyError } from "./partStream.js";
import { spoolPath } from "../storage/blobs/spool.js";

export interface Upload {
  configText: string | undefined;
  /** The uploaded file in the spool; the caller removes it (or adopts it into the blob store). */
  file: { path: string; bytes: number } | null;
}

export async function readUpload(req: FastifyRequest, dataDir: string, maxBytes: number): Promise<Upload> {
  if (!req.isMultipart()) throw new ApiError("H0001", "request body must be multipart/form-data with parts config and file");
  const upload: Upload = { configText: undefined, file: null };
  try {
    for await (const part of req.parts({ limits: { fileSize: maxBytes } })) {
      if (part.type === "field") {
        if (part.fieldname !== "config") continue; // unknown fields are ignored, as unknown config keys are
        if (upload.configText !== undefined) throw new ApiError("H0001", "config part given more than once");
        if (typeof part.value !== "string") throw new ApiError("H0001", "config part must be text");
        upload.configText = part.value;
        continue;
      }
      if (part.fieldname !== "file") {
        part.file.resume(); // drain and ignore
        continue;
      }
      if (upload.file) throw new ApiError("H0001", "file part given more than once");
      assertPartReadable(part.file);
      const target = { path: spoolPath(dataDir, "upload"), bytes: 0 };
      upload.file = target;
      part.file.on("data", (c: Buffer) => (target.bytes += c.length));
      // The parser would otherwise go on reading (and dropping) the rest of the part until the body ends.
      part.file.once("limit", () => part.file.destroy(new ApiError("H0005", `file exceeds the size limit of ${maxBytes} bytes`)));
      await pipeline(part.file, fs.createWriteStream(target.path, { mode: 0o600 }));
      if (part.file.truncated) throw new ApiError("H0005", `file exceeds the size limit of ${maxBytes} bytes`);
    }
  } catch (err) {
    if (upload.file) await fs.promises.rm(upload.file.path, { force: true });
    throw mapMultipartError(err, maxBytes);
  }
  return upload;
}

function mapMultipartError(err: unknown, maxBytes: number): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? "";
  if (code === "FST_REQ_FILE_TOO_LARGE") return new ApiError("H0005", `file exceeds the size limit of ${maxBytes} bytes`);
  if (code.startsWith("FST_") || isTruncatedBodyError(err) || /multipart|boundary|unexpected end/i.test(String((err as Error).message))) {
    return new ApiError("H0001", `malformed multipart body: ${(err as Error).message}`);
  }
  return err;
}
