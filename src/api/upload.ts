// Reads the submit's multipart body: the `config` text and the `file` part, which is streamed to a new blob and
// never held in memory. The size limit is enforced while streaming; what is over it is not read.
import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import type { FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import type { BlobStore } from "../storage/blobs.js";

export interface Upload {
  configText: string | undefined;
  blob: { key: string; path: string; bytes: number } | null;
}

export async function readUpload(req: FastifyRequest, blobs: BlobStore, maxBytes: number): Promise<Upload> {
  if (!req.isMultipart()) throw new ApiError("H0001", "request body must be multipart/form-data with parts config and file");
  const upload: Upload = { configText: undefined, blob: null };
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
      if (upload.blob) throw new ApiError("H0001", "file part given more than once");
      const target = blobs.allocate();
      upload.blob = { ...target, bytes: 0 };
      part.file.on("data", (c: Buffer) => (upload.blob!.bytes += c.length));
      // The parser would otherwise go on reading (and dropping) the rest of the part until the body ends.
      part.file.once("limit", () => part.file.destroy(new ApiError("H0005", `file exceeds the size limit of ${maxBytes} bytes`)));
      await pipeline(part.file, fs.createWriteStream(target.path, { mode: 0o600 }));
      if (part.file.truncated) throw new ApiError("H0005", `file exceeds the size limit of ${maxBytes} bytes`);
    }
  } catch (err) {
    if (upload.blob) await blobs.remove(upload.blob.key);
    throw mapMultipartError(err, maxBytes);
  }
  return upload;
}

function mapMultipartError(err: unknown, maxBytes: number): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? "";
  if (code === "FST_REQ_FILE_TOO_LARGE") return new ApiError("H0005", `file exceeds the size limit of ${maxBytes} bytes`);
  if (code.startsWith("FST_") || /multipart|boundary|unexpected end/i.test(String((err as Error).message))) {
    return new ApiError("H0001", `malformed multipart body: ${(err as Error).message}`);
  }
  return err;
}
