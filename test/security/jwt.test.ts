// JWT attacks against a real server: each forged, confused, stale or tampered token is 401 H0002 (docs/errors.md),
// on the read route and on the routes beyond the spec. test/http/errors.test.ts covers the plain cases (missing
// header, random key, unsigned, expired) on submit; these are the targeted ones.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { authenticate } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString("base64url");

describe("JWT attacks", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let key: Uint8Array;
  let alice: { client_id: string; client_secret: string };
  let bob: { client_id: string; client_secret: string };
  let aliceToken: string;

  /** A token with the server's own claims (issuer, audience, an hour's life), for `sub`, signed HS256 with `k`. */
  const signed = (
    k: Uint8Array,
    sub: string | undefined,
    edit: (j: SignJWT) => SignJWT = (j) => j,
  ): Promise<string> => {
    let j = new SignJWT({})
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer("sori")
      .setAudience("sori-api")
      .setIssuedAt()
      .setExpirationTime("1h");
    if (sub !== undefined) j = j.setSubject(sub);
    return edit(j).sign(k);
  };

  async function expect401(token: string, what: string): Promise<void> {
    // The read of a job id that does not exist: a valid token would get 404, so 401 proves the token was refused.
    for (const [method, url] of [
      ["GET", "/v1/transcribe/someJobId"],
      ["GET", "/v1/transcribe"],
      ["GET", "/v1/callbacks/secret"],
      ["DELETE", "/v1/transcribe/someJobId"],
    ]) {
      const r = await fetch(`${sori.url}${url}`, { method, headers: { authorization: `Bearer ${token}` } });
      const body = (await r.json()) as { code: string; msg: string };
      assert.equal(r.status, 401, `${what}: ${method} ${url} answered ${r.status} ${JSON.stringify(body)}`);
      assert.equal(body.code, "H0002", what);
      assert.equal(typeof body.msg, "string");
    }
  }

  before(async () => {
    env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_DEFAULT_READ_RPS: "1000",
      SORI_DEFAULT_READ_BURST: "1000",
    };
    alice = createClient(env);
    bob = createClient(env);
    sori = await startSori("serve", env);
    key = Buffer.from(fs.readFileSync(path.join(env.SORI_DATA_DIR!, "jwt.key"), "utf8").trim(), "base64url");
    aliceToken = await authenticate(sori.url, alice.client_id, alice.client_secret);
  });
  after(async () => {
    await sori.stop();
    fs.rmSync(env.SORI_DATA_DIR!, { recursive: true, force: true });
  });

  it("control: the server's own key with its own claims is accepted (404 for an unknown job, not 401)", async () => {
    const r = await fetch(`${sori.url}/v1/transcribe/someJobId`, {
      headers: { authorization: `Bearer ${await signed(key, alice.client_id)}` },
    });
    assert.equal(r.status, 404);
  });

  it("alg=none (unsigned, with and without a trailing signature)", async () => {
    const none = new UnsecuredJWT({})
      .setSubject(alice.client_id)
      .setIssuer("sori")
      .setAudience("sori-api")
      .setExpirationTime("1h")
      .encode();
    await expect401(none, "alg none");
    const [, payload, sig] = aliceToken.split(".");
    await expect401(`${b64({ alg: "none", typ: "JWT" })}.${payload}.${sig}`, "alg none with the real signature");
    await expect401(`${b64({ alg: "NONE", typ: "JWT" })}.${payload}.`, "alg NONE");
  });

  it("HS/RS confusion: RS256 with a fresh key pair, and HS256 keyed with that public key", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const rs = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256" })
      .setSubject(alice.client_id)
      .setIssuer("sori")
      .setAudience("sori-api")
      .setExpirationTime("1h")
      .sign(privateKey);
    await expect401(rs, "RS256");
    const pem = new TextEncoder().encode(await exportSPKI(publicKey));
    await expect401(await signed(pem, alice.client_id), "HS256 keyed with the public key");
    // The header says RS256 but the signature is the server's HMAC: the algorithm is pinned, so still refused.
    const [, payload, sig] = (await signed(key, alice.client_id)).split(".");
    await expect401(`${b64({ alg: "RS256", typ: "JWT" })}.${payload}.${sig}`, "RS256 header over an HS256 signature");
  });

  it("expired, not yet valid, wrong issuer or audience (all signed with the real key)", async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect401(
      await signed(key, alice.client_id, (j) => j.setIssuedAt(now - 7200).setExpirationTime(now - 3600)),
      "expired",
    );
    await expect401(await signed(key, alice.client_id, (j) => j.setNotBefore(now + 3600)), "not yet valid");
    await expect401(await signed(key, alice.client_id, (j) => j.setIssuer("someone-else")), "wrong issuer");
    await expect401(await signed(key, alice.client_id, (j) => j.setAudience("other-api")), "wrong audience");
  });

  it("wrong key: another 32-byte key, and the callback signing key of the same data dir", async () => {
    await expect401(await signed(new Uint8Array(32).fill(7), alice.client_id), "zero-ish key");
    const cbFile = fs.readdirSync(env.SORI_DATA_DIR!).find((n) => n.endsWith(".key") && n !== "jwt.key");
    if (cbFile) {
      const cb = Buffer.from(fs.readFileSync(path.join(env.SORI_DATA_DIR!, cbFile), "utf8").trim(), "base64url");
      await expect401(await signed(cb, alice.client_id), `key from ${cbFile}`);
    }
  });

  it("tampered payload: alice's real token with sub changed to bob, signature kept", async () => {
    const [header, payload, sig] = aliceToken.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString()) as Record<string, unknown>;
    assert.equal(claims.sub, alice.client_id);
    await expect401(`${header}.${b64({ ...claims, sub: bob.client_id })}.${sig}`, "sub swapped");
    await expect401(`${header}.${b64({ ...claims, exp: Number(claims.exp) + 86400 })}.${sig}`, "exp extended");
    await expect401(`${header}.${payload}.${sig!.slice(0, -2)}AA`, "signature bits flipped");
  });

  it("missing sub, non-string sub, sub of a client that does not exist", async () => {
    await expect401(await signed(key, undefined), "no sub");
    await expect401(
      await new SignJWT({ sub: 42 as unknown as string })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("sori")
        .setAudience("sori-api")
        .setExpirationTime("1h")
        .sign(key),
      "numeric sub",
    );
    await expect401(await signed(key, "no-such-client"), "unknown client");
  });

  it("huge tokens: 4 KB and 12 KB bearer values, and a header over Node's limit, never a 5xx nor a non-spec body", async () => {
    await expect401("a".repeat(4000) + "." + "b".repeat(100) + ".c", "4 KB junk");
    await expect401(`${aliceToken.split(".")[0]}.${"A".repeat(12_000)}.${aliceToken.split(".")[2]}`, "12 KB payload");
    const r = await fetch(`${sori.url}/v1/transcribe/someJobId`, {
      headers: { authorization: `Bearer ${"x".repeat(64 * 1024)}` },
    });
    const body = (await r.json()) as { code: string };
    assert.ok(r.status >= 400 && r.status < 500, `status ${r.status}`);
    assert.ok(["H0001", "H0002"].includes(body.code), JSON.stringify(body));
  });

  it("a token of a client that was disabled or deleted after it was issued", async () => {
    const carol = createClient(env);
    const dave = createClient(env);
    const carolToken = await authenticate(sori.url, carol.client_id, carol.client_secret);
    const daveToken = await authenticate(sori.url, dave.client_id, dave.client_secret);
    const db = new Sqlite(path.join(env.SORI_DATA_DIR!, "sori.db"));
    try {
      db.prepare("UPDATE clients SET disabled = 1 WHERE id = ?").run(carol.client_id);
      db.prepare("DELETE FROM clients WHERE id = ?").run(dave.client_id);
    } finally {
      db.close();
    }
    await expect401(carolToken, "disabled client");
    await expect401(daveToken, "deleted client");
  });
});
