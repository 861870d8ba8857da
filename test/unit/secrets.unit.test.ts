// Client secrets: the stored scrypt format, verification, and the dummy hash used for unknown client ids.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dummySecretHash, hashSecret, newClientId, newClientSecret, verifySecret } from "../../src/auth/secrets.js";
import { newId } from "../../src/domain/ids.js";

const B64URL = /^[A-Za-z0-9_-]+$/;

describe("client secrets", () => {
  it("generates ids and secrets from a CSPRNG, base64url, distinct each time", () => {
    const ids = new Set(Array.from({ length: 50 }, newClientId));
    const secrets = new Set(Array.from({ length: 50 }, newClientSecret));
    assert.equal(ids.size, 50);
    assert.equal(secrets.size, 50);
    for (const s of [...ids, ...secrets]) assert.match(s, B64URL);
    assert.equal(newClientId().length, 16); // 12 bytes
    assert.equal(newClientSecret().length, 43); // 32 bytes
  });

  it("never begins an id or secret with '-', which a command line reads as an option (1 in 64 draws did)", () => {
    for (let i = 0; i < 3000; i++) {
      assert.doesNotMatch(newClientId(), /^-/);
      assert.doesNotMatch(newClientSecret(), /^-/);
      assert.doesNotMatch(newId(16), /^-/);
    }
  });

  it("hashes as scrypt$N$r$p$salt$hash with a fresh salt", async () => {
    const h1 = await hashSecret("s3cret");
    const h2 = await hashSecret("s3cret");
    const parts = h1.split("$");
    assert.equal(parts.length, 6);
    const [kind, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
    assert.equal(kind, "scrypt");
    assert.equal(Number(n), 2 ** 15);
    assert.equal(Number(r), 8);
    assert.equal(Number(p), 1);
    assert.match(salt, B64URL);
    assert.match(hash, B64URL);
    assert.equal(Buffer.from(salt, "base64url").length, 16);
    assert.equal(Buffer.from(hash, "base64url").length, 32);
    assert.notEqual(h1, h2, "two hashes of one secret differ by their salt");
    assert.ok(!h1.includes("s3cret"));
  });

  it("verifies the right secret and rejects a wrong one", async () => {
    const secret = newClientSecret();
    const stored = await hashSecret(secret);
    assert.equal(await verifySecret(secret, stored), true);
    assert.equal(await verifySecret(secret + "x", stored), false);
    assert.equal(await verifySecret(secret.slice(0, -1), stored), false);
  });

  it("rejects a stored value that is not a scrypt hash", async () => {
    for (const stored of ["", "plain", "bcrypt$1$2$3$4$5", "scrypt$32768$8$1$$", "scrypt$32768$8$1$c2FsdA"]) {
      assert.equal(await verifySecret("x", stored), false, stored);
    }
  });

  it("verifies with the parameters stored in the hash, so they can be raised later", async () => {
    // A hash made with other (cheaper) parameters still verifies.
    const { scryptSync, randomBytes } = await import("node:crypto");
    const salt = randomBytes(16);
    const key = scryptSync("old", salt, 32, { N: 2 ** 10, r: 8, p: 1 });
    const stored = ["scrypt", 2 ** 10, 8, 1, salt.toString("base64url"), key.toString("base64url")].join("$");
    assert.equal(await verifySecret("old", stored), true);
    assert.equal(await verifySecret("new", stored), false);
  });

  it("dummy hash: one stable, real hash with the production parameters that nothing verifies against", async () => {
    const d1 = await dummySecretHash();
    const d2 = await dummySecretHash();
    assert.equal(d1, d2, "memoised: created once per process");
    const real = await hashSecret("anything");
    // Same kind and cost parameters as a real hash: a check against it does the same work as a real check.
    assert.deepEqual(d1.split("$").slice(0, 4), real.split("$").slice(0, 4));
    assert.equal(d1.split("$")[5]!.length, real.split("$")[5]!.length);
    for (const guess of ["anything", newClientSecret()]) assert.equal(await verifySecret(guess, d1), false);
  });

  it("an unknown id (dummy hash) takes about as long as a wrong secret (same scrypt work)", async () => {
    const stored = await hashSecret("right");
    const dummy = await dummySecretHash();
    const time = async (h: string): Promise<number> => {
      const t0 = performance.now();
      await verifySecret("wrong", h);
      return performance.now() - t0;
    };
    const real = await time(stored);
    const unknown = await time(dummy);
    // Loose bound: the point is that the unknown-id path is not a fast path (a skipped KDF would be ~0 ms).
    assert.ok(unknown > real / 4, `dummy ${unknown.toFixed(1)} ms vs real ${real.toFixed(1)} ms`);
  });
});
