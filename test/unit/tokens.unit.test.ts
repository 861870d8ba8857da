// Access tokens: HS256 JWTs pinned to algorithm, issuer and audience; the signing key file in the data dir.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from "jose";
import { loadSigningKey, tokenIssuer } from "../../src/auth/tokens.js";

const KEY = new Uint8Array(32).fill(7);
const OTHER_KEY = new Uint8Array(32).fill(8);
const TTL = 6 * 3600;

describe("access tokens", () => {
  const issuer = tokenIssuer(KEY, TTL);

  it("sign → verify round-trips the client id, with expire_at in epoch seconds", async () => {
    const now = Date.now();
    const { access_token, expire_at } = await issuer.issue("client-1", now);
    assert.equal(expire_at, Math.floor(now / 1000) + TTL);
    assert.equal(access_token.split(".").length, 3);
    assert.equal(await issuer.verify(access_token), "client-1");
    const header = decodeProtectedHeader(access_token);
    assert.equal(header.alg, "HS256");
    const claims = decodeJwt(access_token);
    assert.equal(claims.sub, "client-1");
    assert.equal(claims.iss, "sori");
    assert.equal(claims.aud, "sori-api");
    assert.equal(claims.exp, expire_at);
    assert.equal(claims.iat, Math.floor(now / 1000));
    assert.equal(typeof claims.jti, "string");
  });

  it("gives each token its own jti", async () => {
    const a = await issuer.issue("c");
    const b = await issuer.issue("c");
    assert.notEqual(decodeJwt(a.access_token).jti, decodeJwt(b.access_token).jti);
  });

  it("rejects a token signed with another key", async () => {
    const { access_token } = await tokenIssuer(OTHER_KEY, TTL).issue("client-1");
    assert.equal(await issuer.verify(access_token), null);
  });

  it("rejects an expired token", async () => {
    const { access_token } = await issuer.issue("client-1", Date.now() - (TTL + 60) * 1000);
    assert.equal(await issuer.verify(access_token), null);
    const { access_token: short } = await tokenIssuer(KEY, 1).issue("client-1", Date.now() - 5000);
    assert.equal(await issuer.verify(short), null);
  });

  const signed = (build: (j: SignJWT) => SignJWT, alg = "HS256", key: Uint8Array = KEY): Promise<string> =>
    build(new SignJWT({}).setProtectedHeader({ alg })).sign(key);

  it("accepts a hand-made token with the right claims (the control for the cases below)", async () => {
    const t = await signed((j) => j.setSubject("c").setIssuer("sori").setAudience("sori-api").setExpirationTime("1h"));
    assert.equal(await issuer.verify(t), "c");
  });

  it("rejects a wrong audience or issuer, or none at all", async () => {
    const cases = [
      (j: SignJWT) => j.setSubject("c").setIssuer("sori").setAudience("other").setExpirationTime("1h"),
      (j: SignJWT) => j.setSubject("c").setIssuer("evil").setAudience("sori-api").setExpirationTime("1h"),
      (j: SignJWT) => j.setSubject("c").setAudience("sori-api").setExpirationTime("1h"),
      (j: SignJWT) => j.setSubject("c").setIssuer("sori").setExpirationTime("1h"),
    ];
    for (const build of cases) assert.equal(await issuer.verify(await signed(build)), null);
  });

  it("rejects a token without a subject", async () => {
    const t = await signed((j) => j.setIssuer("sori").setAudience("sori-api").setExpirationTime("1h"));
    assert.equal(await issuer.verify(t), null);
  });

  it("rejects alg none and other HMAC algorithms with the same key", async () => {
    const none = new UnsecuredJWT({})
      .setSubject("c")
      .setIssuer("sori")
      .setAudience("sori-api")
      .setExpirationTime("1h")
      .encode();
    assert.equal(await issuer.verify(none), null);
    // "none" with a signature part that is not empty, and the header rewritten on a valid token.
    const valid = (await issuer.issue("c")).access_token;
    const [, payload, sig] = valid.split(".");
    const noneHeader = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    assert.equal(await issuer.verify(`${noneHeader}.${payload}.`), null);
    assert.equal(await issuer.verify(`${noneHeader}.${payload}.${sig}`), null);
    const hs512 = await signed(
      (j) => j.setSubject("c").setIssuer("sori").setAudience("sori-api").setExpirationTime("1h"),
      "HS512",
    );
    assert.equal(await issuer.verify(hs512), null);
  });

  it("rejects garbage and a tampered payload", async () => {
    const valid = (await issuer.issue("c")).access_token;
    const [h, , s] = valid.split(".");
    const forgedPayload = Buffer.from(
      JSON.stringify({ sub: "admin", iss: "sori", aud: "sori-api", exp: 9e9 }),
    ).toString("base64url");
    for (const t of ["", "abc", "a.b.c", `${valid}x`, `${h}.${forgedPayload}.${s}`])
      assert.equal(await issuer.verify(t), null, t);
  });

  describe("loadSigningKey", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-unit-key-"));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("creates a 32-byte key with mode 0600 once and reads the same key afterwards", () => {
      const dataDir = path.join(dir, "a", "nested");
      const k1 = loadSigningKey(dataDir);
      const k2 = loadSigningKey(dataDir);
      assert.equal(k1.length, 32);
      assert.deepEqual(Buffer.from(k1), Buffer.from(k2));
      const st = fs.statSync(path.join(dataDir, "jwt.key"));
      if (process.platform !== "win32") assert.equal(st.mode & 0o777, 0o600);
    });

    it("refuses a key file holding fewer than 32 bytes", () => {
      const dataDir = path.join(dir, "short");
      fs.mkdirSync(dataDir);
      fs.writeFileSync(path.join(dataDir, "jwt.key"), Buffer.alloc(16).toString("base64url"));
      assert.throws(() => loadSigningKey(dataDir), /shorter than 32 bytes/);
    });

    it("a token from one key file verifies with the same file read again", async () => {
      const dataDir = path.join(dir, "b");
      const t = (await tokenIssuer(loadSigningKey(dataDir), TTL).issue("c")).access_token;
      assert.equal(await tokenIssuer(loadSigningKey(dataDir), TTL).verify(t), "c");
    });
  });
});
