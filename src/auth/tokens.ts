// Access tokens: JWTs signed with HS256 by a server key that is created on first start and kept in the data dir
// (mode 0600). Verification pins the algorithm, issuer and audience, so alg=none and algorithm confusion fail.
import { randomBytes } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import { loadKeyFile } from "./keyFile.js";

const ISSUER = "sori";
const AUDIENCE = "sori-api";
const ALG = "HS256";

export interface TokenIssuer {
  issue(clientId: string, now?: number): Promise<{ access_token: string; expire_at: number }>;
  /** The client id the token was issued to, or null when the token is invalid or expired. */
  verify(token: string): Promise<string | null>;
  /** The client id and expiry (epoch seconds) of a valid token, or null: a streaming session ends at the expiry. */
  claims(token: string): Promise<{ clientId: string; exp: number } | null>;
}

export function loadSigningKey(dataDir: string): Uint8Array {
  return loadKeyFile(dataDir, "jwt.key");
}

export function tokenIssuer(key: Uint8Array, ttlS: number): TokenIssuer {
  async function claims(token: string): Promise<{ clientId: string; exp: number } | null> {
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: [ALG], issuer: ISSUER, audience: AUDIENCE });
      if (typeof payload.sub !== "string" || typeof payload.exp !== "number") return null;
      return { clientId: payload.sub, exp: payload.exp };
    } catch {
      return null;
    }
  }
  return {
    async issue(clientId, now = Date.now()) {
      const iat = Math.floor(now / 1000);
      const exp = iat + ttlS;
      const access_token = await new SignJWT({})
        .setProtectedHeader({ alg: ALG, typ: "JWT" })
        .setSubject(clientId)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .setJti(randomBytes(9).toString("base64url"))
        .sign(key);
      return { access_token, expire_at: exp };
    },
    async verify(token) {
      return (await claims(token))?.clientId ?? null;
    },
    claims,
  };
}
