// Reads a submit's multipart body, for both submit routes (POST /v1/transcribe and the OpenAI-compatible one): the
// text parts, and the `file` part, which is streamed to a private spool file and never held in memory. The size
// limit is enforced while streaming; what is over it is not read. The caller inspects the spool file (format,
// duration) and only then moves it into the blob store, so that a refused upload never reaches a remote store
// (src/storage/blobs/, docs/deployment.md).
import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import type { FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { spoolPath } from "../storage/blobs/spool.js";
import { assertPartReadable, isTruncatedBodyError } from "./partStream.js";

export interface SpooledFile {
  path: string;
  bytes: number;
}

export interface Upload {
  /** Every text part's values by part name, in the order sent. */
  fields: Map<string, string[]>;
  /** The uploaded file in the spool; the caller removes it (or adopts it into the blob store). */
  file: SpooledFile | null;
  /** Every `file` part in the order sent (the first is `file`), where the route takes several (`maxFiles`). */
  files: SpooledFile[];
}

export interface UploadLimits {
  dataDir: string;
  /** The most bytes of all `file` parts together. */
  maxBytes: number;
  /** How many `file` parts the route takes (default 1; one more is 400 H0001). */
  maxFiles?: number;
  /** The 413 message for a file over maxBytes. */
  tooLarge: string;
  /** The text parts the route reads; only these are kept when sent as a file (other file parts are drained). */
  textParts: readonly string[];
}

/** Largest text part sent as a file (a `config` sent with a file name): it is read into memory. */
const MAX_TEXT_FILE_BYTES = 1024 * 1024;

/** Bounds on a multipart body's parts, for every upload route (docs/api.md, "POST /v1/transcribe"). Parts of other
 * names are ignored, but the parser keeps every text part in memory: at most `textParts` of them, `textBytes` each,
 * and `parts` in all. */
export const FORM_LIMITS = { textParts: 64, parts: 80, textBytes: 256 * 1024 } as const;

export async function readUpload(req: FastifyRequest, limits: UploadLimits): Promise<Upload> {
  if (!req.isMultipart())
    throw new ApiError("H0001", "request body must be multipart/form-data with parts config and file");
  const upload: Upload = { fields: new Map(), file: null, files: [] };
  const maxFiles = limits.maxFiles ?? 1;
  const add = (name: string, value: string): void =>
    void upload.fields.set(name, [...(upload.fields.get(name) ?? []), value]);
  try {
    // The audio files, and room for the text parts sent as files.
    const files = maxFiles + limits.textParts.length;
    const parts = req.parts({ limits: { fileSize: limits.maxBytes, files } })[Symbol.asyncIterator]();
    for (let next = await parts.next(); !next.done; next = await parts.next()) {
      const part = next.value;
      if (part.type === "field") {
        if (!limits.textParts.includes(part.fieldname)) continue; // unknown parts are ignored, as unknown config keys are
        // A part sent with Content-Type application/json arrives parsed; clients that label the config part so
        // (a public Java sample does) get it read as the JSON text it was.
        add(part.fieldname, typeof part.value === "string" ? part.value : JSON.stringify(part.value));
        continue;
      }
      if (part.fieldname !== "file") {
        // Some clients send text parts with a file name (a Blob in a browser FormData): read those as text.
        if (limits.textParts.includes(part.fieldname)) add(part.fieldname, await readText(part.file));
        else part.file.resume();
        continue;
      }
      if (upload.files.length >= maxFiles) {
        part.file.resume();
        throw new ApiError(
          "H0001",
          maxFiles === 1 ? "file part given more than once" : `at most ${maxFiles} file parts are accepted`,
        );
      }
      // A part the parser gave up on: the body ended inside it, or a bound on the parts was passed after it began
      // (the parser's error comes next, and says which).
      if (part.file.destroyed) await parts.next();
      assertPartReadable(part.file);
      const target = { path: spoolPath(limits.dataDir, "upload"), bytes: 0 };
      upload.files.push(target);
      upload.file ??= target;
      const before = upload.files.reduce((n, f) => n + f.bytes, 0);
      part.file.on("data", (c: Buffer) => {
        target.bytes += c.length;
        // Several files share one bound: what is over it is not read.
        if (before + target.bytes > limits.maxBytes) part.file.destroy(new ApiError("H0005", limits.tooLarge));
      });
      // The parser would otherwise go on reading (and dropping) the rest of the part until the body ends.
      part.file.once("limit", () => part.file.destroy(new ApiError("H0005", limits.tooLarge)));
      await pipeline(part.file, fs.createWriteStream(target.path, { mode: 0o600 }));
      if (part.file.truncated) throw new ApiError("H0005", limits.tooLarge);
    }
  } catch (err) {
    // Refused mid-body: the parser, left waiting for someone to read its next part, would hold the rest of the body
    // back, and the lingering close (lingeringClose.ts) could never read it to its end and keep the connection.
    req.raw.unpipe();
    await Promise.all(upload.files.map((f) => fs.promises.rm(f.path, { force: true })));
    throw mapMultipartError(err, limits.tooLarge);
  }
  return upload;
}

/** The only value of a text part, undefined when absent; 400 H0001 when it was sent more than once. */
export function singleField(upload: Upload, name: string): string | undefined {
  const values = upload.fields.get(name);
  if (values && values.length > 1) throw new ApiError("H0001", `${name} part given more than once`);
  return values?.[0];
}

async function readText(stream: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const c of stream) {
    bytes += c.length;
    if (bytes > MAX_TEXT_FILE_BYTES) throw new ApiError("H0001", `a text part is over ${MAX_TEXT_FILE_BYTES} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Parser errors are the client's malformed body (H0001); anything else (a full disk, an I/O error) stays a server
 * error (500 E500). */
function mapMultipartError(err: unknown, tooLarge: string): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? "";
  if (code === "FST_REQ_FILE_TOO_LARGE") return new ApiError("H0005", tooLarge);
  if (code === "FST_INVALID_JSON_FIELD_ERROR") {
    return new ApiError(
      "H0001",
      "a part sent as application/json is not valid JSON, or holds a __proto__ or constructor.prototype key",
    );
  }
  if (code === "FST_FIELDS_LIMIT" || code === "FST_PARTS_LIMIT") {
    return new ApiError(
      "H0001",
      `a form may hold at most ${FORM_LIMITS.textParts} text parts and ${FORM_LIMITS.parts} parts in all`,
    );
  }
  if (
    code.startsWith("FST_") ||
    isTruncatedBodyError(err) ||
    /multipart|boundary|unexpected end/i.test(String((err as Error).message))
  ) {
    return new ApiError("H0001", `malformed multipart body: ${(err as Error).message}`);
  }
  return err;
}
