// Token buckets keyed by client (`read:<id>`) or address (`auth:<ip>`). RateLimiter keeps them in this process's
// memory: the embedded SQLite default, where one API process serves. In scale-out (PostgreSQL) the buckets live in
// the shared store instead (src/storage/rateBuckets.ts, SORI_RATE_LIMITS), so N API hosts do not give a client N
// times its rate; docs/deployment.md has the latency that costs.

/** What the routes take tokens from: either kind of bucket store. */
export interface Limiter {
  /** Takes one token of `key`; false when the key is over its rate. */
  take(key: string, ratePerS: number, burst: number): boolean | Promise<boolean>;
}

export interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter implements Limiter {
  private buckets = new Map<string, Bucket>();
  private sweepAt = 0;

  /** Takes one token; false when the key is over its rate. */
  take(key: string, ratePerS: number, burst: number, now = Date.now()): boolean {
    this.sweep(now);
    const b = this.buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * ratePerS);
    b.at = now;
    // The refill is a sum of float steps (ten 0.1 s steps give 0.9999999999999999), so allow a rounding hair.
    const ok = b.tokens >= 1 - 1e-9;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    return ok;
  }

  // Forget idle keys now and then so the map cannot grow without bound.
  private sweep(now: number): void {
    if (now - this.sweepAt < 60_000) return;
    this.sweepAt = now;
    for (const [k, b] of this.buckets) if (now - b.at > 600_000) this.buckets.delete(k);
  }
}
