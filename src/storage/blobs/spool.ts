// Private local copies of audio under <data dir>/spool: an upload while the API inspects it (format sniffing and
// duration probing need a seekable file), and a remote blob while the engine reads it (it decodes from a path).
// Names are random; the files are the service user's alone (0600 in a 0700 directory).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { byteLimit } from "./limit.js";

export function spoolDir(dataDir: string): string {
  const dir = path.join(dataDir, "spool");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** What a spool file holds; its name says so, because the two are abandoned on different clocks (sweepSpool). */
export type SpoolUse = "upload" | "engine";
const PREFIX: Record<SpoolUse, string> = { upload: "up-", engine: "rd-" };

/** A fresh spool file name (not yet created). */
export function spoolPath(dataDir: string, use: SpoolUse): string {
  return path.join(spoolDir(dataDir), `${PREFIX[use]}${randomBytes(12).toString("base64url")}.tmp`);
}

/** Streams `source` to a new spool file; on any failure (over `maxBytes` included) the partial file is removed. */
export async function spoolStream(
  dataDir: string,
  use: SpoolUse,
  source: Readable,
  maxBytes?: number,
): Promise<{ path: string; bytes: number }> {
  const file = spoolPath(dataDir, use);
  const counter = byteLimit(maxBytes);
  try {
    await pipeline(source, counter, fs.createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    await fs.promises.rm(file, { force: true });
    throw err;
  }
  return { path: file, bytes: counter.bytes };
}

/**
 * Removes spool files left by a process that died mid-way. An upload's file is written to until it is adopted
 * (moments after its last byte), so one untouched for `maxAgeMs.upload` is abandoned; an engine copy is read for as
 * long as an engine run may last, so it gets `maxAgeMs.engine`.
 */
export async function sweepSpool(
  dataDir: string,
  maxAgeMs: Record<SpoolUse, number>,
  now = Date.now(),
): Promise<number> {
  const dir = spoolDir(dataDir);
  let removed = 0;
  for (const name of await fs.promises.readdir(dir)) {
    const file = path.join(dir, name);
    const st = await fs.promises.stat(file).catch(() => null);
    const olderThanMs = name.startsWith(PREFIX.upload) ? maxAgeMs.upload : maxAgeMs.engine;
    if (st?.isFile() && now - st.mtimeMs > olderThanMs) {
      await fs.promises.rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}

/** `adopt` for stores that copy: streams the spooled file in with `put`, then removes it, stored or not. */
export async function adoptByPut(
  put: (source: Readable) => Promise<{ key: string; bytes: number }>,
  filePath: string,
): Promise<{ key: string; bytes: number }> {
  try {
    return await put(fs.createReadStream(filePath));
  } finally {
    await fs.promises.rm(filePath, { force: true });
  }
}
