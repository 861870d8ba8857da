// Token buckets keyed by client or address, in this process's memory. With several API hosts each host enforces
// its own share; that is the usual trade-off for a limit that must cost nothing on the hot read path.

export interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
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
