// Client secrets: generated with a CSPRNG, stored only as a scrypt hash (a memory-hard KDF from Node's crypto),
// compared in constant time.
import { randomBytes, type ScryptOptions, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { newId } from "../domain/ids.js";

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))));

// N=2^15, r=8, p=1: about 32 MiB and tens of ms per check; maxmem must allow 128*N*r bytes.
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEYLEN = 32;

// Both are typed on command lines (`sori submit --client-id …`): neither begins with `-` (src/domain/ids.ts).
export const newClientId = (): string => newId(12);
export const newClientSecret = (): string => newId(32);

/** `scrypt$N$r$p$salt$hash`, all base64url: self-describing so parameters can be raised later. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(secret, salt, KEYLEN, { ...PARAMS, maxmem: 64 * 1024 * 1024 });
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split("$");
  if (kind !== "scrypt" || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const key = await scrypt(secret, Buffer.from(salt, "base64url"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * 1024 * 1024,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

// A fixed hash to verify against when the client id is unknown, so that a wrong id and a wrong secret take the
// same time and an attacker cannot learn which ids exist.
let dummyHash: Promise<string> | undefined;
export const dummySecretHash = (): Promise<string> => (dummyHash ??= hashSecret(newClientSecret()));
