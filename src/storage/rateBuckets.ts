// Token buckets in the PostgreSQL store (migration 006), so that every API host of a scale-out deployment draws on
// one bucket per key: N hosts give a client its read rate once, not N times. One statement per take: an upsert
// that refills the bucket by the time passed, takes a token when there is one, and says whether it did. The row
// lock of the upsert orders concurrent takes of one key across hosts; the time is the database's clock, so hosts
// whose clocks disagree still refill one bucket at one rate.
import { sql } from "kysely";
import type { Store } from "./db.js";

const SWEEP_EVERY_MS = 60_000;
const IDLE_MS = 600_000; // a bucket untouched this long is full again anyway: dropping it changes nothing

export class StoreRateLimiter {
  private sweepAt = 0;

  constructor(private readonly store: Store) {}

  /** Takes one token of `key`; false when the key is over its rate. */
  async take(key: string, ratePerS: number, burst: number): Promise<boolean> {
    this.sweep();
    // `level` is the bucket refilled to now (ON CONFLICT allows no FROM, so it is spelled out where it is used);
    // the same rounding hair as the in-memory limiter (src/api/rateLimit.ts).
    const level = sql`least(${burst}::float8, b.tokens + greatest(EXCLUDED.at - b.at, 0) / 1000.0 * ${ratePerS}::float8)`;
    const enough = sql`${level} >= 1 - 1e-9`;
    const { rows } = await sql<{ ok: boolean }>`
      INSERT INTO rate_buckets AS b (key, tokens, at, ok)
      VALUES (${key}, greatest(${burst}::float8 - 1, 0), (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
              ${burst}::float8 >= 1)
      ON CONFLICT (key) DO UPDATE SET
        tokens = ${level} - CASE WHEN ${enough} THEN 1 ELSE 0 END,
        at = greatest(b.at, EXCLUDED.at),
        ok = ${enough}
      RETURNING ok`.execute(this.store.db);
    return rows[0]?.ok === true;
  }

  // Forget idle buckets now and then, so the table cannot grow without bound (fire and forget: a failed sweep is
  // retried at the next one).
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweepAt < SWEEP_EVERY_MS) return;
    this.sweepAt = now;
    sql`DELETE FROM rate_buckets WHERE at < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - ${IDLE_MS}`
      .execute(this.store.db)
      .catch(() => {});
  }
}
