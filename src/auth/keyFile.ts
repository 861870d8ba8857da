// A 32-byte secret kept in the data dir (0600), created by whichever process starts first. Token signing and
// callback signing each have their own file, so one key never serves two purposes.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export function loadKeyFile(dataDir: string, name: string): Buffer {
  const file = path.join(dataDir, name);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    // wx: only the first of several processes starting at once creates the key; the others read it.
    fs.writeFileSync(file, randomBytes(32).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64url");
  if (key.length < 32) throw new Error(`${file} holds a key shorter than 32 bytes`);
  return key;
}
