// The read-path token bucket, driven by an explicit clock (the `now` argument of take).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RateLimiter } from "../../src/api/rateLimit.js";

const T = 1_700_000_000_000;

describe("RateLimiter", () => {
  it("allows a full burst at once, then refuses", () => {
    const rl = new RateLimiter();
    const got = Array.from({ length: 8 }, () => rl.take("c", 1, 5, T));
    assert.deepEqual(got, [true, true, true, true, true, false, false, false]);
  });

  it("refills at the rate: one token per 1/rate seconds", () => {
    const rl = new RateLimiter();
    for (let i = 0; i < 5; i++) assert.equal(rl.take("c", 2, 5, T), true);
    assert.equal(rl.take("c", 2, 5, T), false);
    assert.equal(rl.take("c", 2, 5, T + 400), false); // 0.8 token
    assert.equal(rl.take("c", 2, 5, T + 500), true); // 1.0 token
    assert.equal(rl.take("c", 2, 5, T + 500), false);
    assert.equal(rl.take("c", 2, 5, T + 1000), true);
  });

  it("refused calls do not push the refill back", () => {
    const rl = new RateLimiter();
    assert.equal(rl.take("c", 1, 1, T), true);
    // Hammering while empty: each refused call still accrues the time that passed.
    for (let t = T + 100; t < T + 1000; t += 100) assert.equal(rl.take("c", 1, 1, t), false);
    assert.equal(rl.take("c", 1, 1, T + 1000), true);
  });

  it("works with a rate below one per second", () => {
    const rl = new RateLimiter();
    assert.equal(rl.take("c", 0.1, 1, T), true);
    assert.equal(rl.take("c", 0.1, 1, T + 9_999), false);
    assert.equal(rl.take("c", 0.1, 1, T + 10_000), true);
  });

  it("never holds more than the burst after a long idle time", () => {
    const rl = new RateLimiter();
    assert.equal(rl.take("c", 10, 3, T), true);
    const later = T + 3600_000;
    const got = Array.from({ length: 5 }, () => rl.take("c", 10, 3, later));
    assert.deepEqual(got, [true, true, true, false, false]);
  });

  it("keeps a bucket per key", () => {
    const rl = new RateLimiter();
    assert.equal(rl.take("a", 1, 1, T), true);
    assert.equal(rl.take("a", 1, 1, T), false);
    assert.equal(rl.take("b", 1, 1, T), true);
    assert.equal(rl.take("b", 1, 1, T), false);
  });

  it("forgets idle keys without changing what they are allowed", () => {
    const rl = new RateLimiter();
    for (let i = 0; i < 100; i++) rl.take(`k${i}`, 1, 1, T);
    const size = (): number => (rl as unknown as { buckets: Map<string, unknown> }).buckets.size;
    assert.equal(size(), 100);
    // 11 minutes later a sweep drops every idle bucket; the caller gets a full bucket, as it would have anyway.
    assert.equal(rl.take("fresh", 1, 1, T + 660_000), true);
    assert.equal(size(), 1);
    assert.equal(rl.take("k0", 1, 2, T + 660_000), true);
    assert.equal(rl.take("k0", 1, 2, T + 660_000), true);
    assert.equal(rl.take("k0", 1, 2, T + 660_000), false);
  });

  it("a refused key recovers even when its clock goes backwards slightly", () => {
    // Date.now() is not monotonic; a step back must not leave a bucket stuck negative for long.
    const rl = new RateLimiter();
    assert.equal(rl.take("c", 1, 1, T), true);
    assert.equal(rl.take("c", 1, 1, T - 500), false);
    assert.equal(rl.take("c", 1, 1, T + 1000), true);
  });
});
