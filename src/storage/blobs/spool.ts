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

/** A fresh spool file name (not yet created). */
export function spoolPath(dataDir: string): string {
  return path.join(spoolDir(dataDir), `${randomBytes(12).toString("base64url")}.tmp`);
}

/** Streams `source` to a new spool file; on any failure (over `maxBytes` included) the partial file is removed. */
export async function spoolStream(dataDir: string, source: Readable, maxBytes?: number): Promise<{ path: string; bytes: number }> {
  const file = spoolPath(dataDir);
  const counter = byteLimit(maxBytes);
  try {
    await pipeline(source, counter, fs.createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    await fs.promises.rm(file, { force: true });
    throw err;
  }
  return { path: file, bytes: counter.bytes };
}

/** Removes spool files left by a process that died mid-way (older than any engine run may last). */
export async function sweepSpool(dataDir: string, olderThanMs: number, now = Date.now()): Promise<number> {
  const dir = spoolDir(dataDir);
  let removed = 0;
  for (const name of await fs.promises.readdir(dir)) {
    const file = path.join(dir, name);
    const st = await fs.promises.stat(file).catch(() => null);
    if (st?.isFile() && now - st.mtimeMs > olderThanMs) {
      await fs.promises.rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}
