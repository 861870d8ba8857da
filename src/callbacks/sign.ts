// Callback signatures. Each client has its own callback secret, derived from a server key (callback.key in the
// data dir, made on first start like jwt.key) and the client's id and credential hash: nothing more to store, the
// same in every process that shares the data dir, and a new client secret gives a new callback secret.
// A delivery carries `X-Sori-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the time
// is signed with the body, so a receiver can refuse old deliveries replayed later.
import { createHmac, timingSafeEqual } from "node:crypto";
import { loadKeyFile } from "../auth/keyFile.js";

export const SIGNATURE_HEADER = "x-sori-signature";

export function loadCallbackKey(dataDir: string): Buffer {
  return loadKeyFile(dataDir, "callback.key");
}

export function callbackSecret(key: Buffer, client: { id: string; secret_hash: string }): string {
  const mac = createHmac("sha256", key)
    .update(`sori-callback-v1\0${client.id}\0${client.secret_hash}`)
    .digest("base64url");
  return `scb_${mac}`;
}

export function signatureHeader(secret: string, body: string, nowS = Math.floor(Date.now() / 1000)): string {
  return `t=${nowS},v1=${createHmac("sha256", secret).update(`${nowS}.${body}`).digest("hex")}`;
}

/** What a receiver does (docs/extras.md has the same in a few lines): recompute, compare in constant time, and
 * refuse a signature older than `toleranceS`. */
export function verifySignature(
  secret: string,
  body: string,
  header: string,
  toleranceS = 300,
  nowS = Math.floor(Date.now() / 1000),
): boolean {
  const m = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(nowS - t) > toleranceS) return false;
  const want = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(want, Buffer.from(m[2]!, "hex"));
}
