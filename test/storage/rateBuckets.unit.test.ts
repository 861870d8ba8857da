// The shared token buckets (src/storage/rateBuckets.ts) on a fresh PostgreSQL database: the same bucket rules as the
// in-memory limiter (test/unit/rateLimit.unit.test.ts), and one bucket for every limiter that shares the store. The
// database's clock refills, so the refill is checked with waits of a rate that makes them short.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { openStore, type Store } from "../../src/storage/db.js";
import { StoreRateLimiter } from "../../src/storage/rateBuckets.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const skip = (await pgUnavailable()) ?? false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("StoreRateLimiter (PostgreSQL)", { skip }, () => {
  let db: PgDatabase;
  let stores: Store[];
  let dir: string;

  before(async () => {
    db = await createPgDatabase("sori_rate");
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-rate-"));
    // Two stores with pools of their own: what two API hosts have.
    stores = [
      await openStore({ databaseUrl: db.url, dataDir: dir }),
      await openStore({ databaseUrl: db.url, dataDir: dir }),
    ];
  });
  after(async () => {
    for (const s of stores ?? []) await s.close();
    await db?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("allows a full burst, then refuses; keys are separate", async () => {
    const rl = new StoreRateLimiter(stores[0]!);
    const got: boolean[] = [];
    for (let i = 0; i < 7; i++) got.push(await rl.take("read:a", 0.01, 5));
    assert.deepEqual(got, [true, true, true, true, true, false, false]);
    assert.equal(await rl.take("read:b", 0.01, 5), true);
  });

  it("refills at the rate, and refused takes do not push the refill back", async () => {
    const rl = new StoreRateLimiter(stores[0]!);
    assert.equal(await rl.take("read:r", 5, 1), true); // one token per 200 ms
    assert.equal(await rl.take("read:r", 5, 1), false);
    await sleep(100);
    assert.equal(await rl.take("read:r", 5, 1), false); // about half a token
    await sleep(150);
    assert.equal(await rl.take("read:r", 5, 1), true);
  });

  it("two limiters on two pools draw on one bucket, also when they take at once", async () => {
    const [a, b] = stores.map((s) => new StoreRateLimiter(s));
    const takes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a! : b!).take("read:shared", 0.01, 10)),
    );
    assert.equal(takes.filter(Boolean).length, 10);
  });
});
