// The load bench (bench/load.ts) with small numbers: 60 short jobs, 2 in-process workers with the real engine,
// 10 s of reads at 100 requests/s while they run. Correctness is asserted (nothing lost, nothing run twice, claims
// in submission order, no 5xx); latency depends on what else the machine runs, so it is printed, not asserted.
// The full run (1,000 jobs, 4 workers, 200 reads/s) is `npx tsx bench/load.ts`; its figures are in
// docs/observability.md.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runLoad } from "../../bench/load.js";

describe("load: 60 jobs, 2 workers, reads at 100 rps", () => {
  it("loses no job, runs none twice, claims in submission order, and answers every read without a 5xx", async (t) => {
    const r = await runLoad({
      jobs: 60,
      workers: 2,
      readRps: 100,
      readS: 10,
      timeoutS: 600,
      progress: (l) => t.diagnostic(l),
    });
    t.diagnostic(
      `reads: p50 ${r.reads.p50_ms} ms, p99 ${r.reads.p99_ms} ms, max ${r.reads.max_ms} ms over ${r.reads.requests} requests ` +
        `(server side p50 ${r.reads.server_p50_ms} ms, p99 ${r.reads.server_p99_ms} ms); ` +
        `jobs: ${r.jobs_s} s (${r.jobs_per_s}/s); load average ${r.load_avg_1m.start} -> ${r.load_avg_1m.end}`,
    );
    assert.equal(r.accepted, 60, JSON.stringify(r));
    assert.equal(r.completed, 60, JSON.stringify(r));
    assert.equal(r.lost, 0);
    assert.equal(r.duplicates, 0, JSON.stringify(r));
    assert.equal(r.fifo_violations, 0, JSON.stringify(r));
    assert.equal(r.reads["5xx"], 0, JSON.stringify(r.reads));
    assert.equal(r.reads.errors, 0, JSON.stringify(r.reads));
    assert.equal(r.reads.non2xx, 0, JSON.stringify(r.reads));
    assert.ok(r.reads.requests >= 100 * 10 * 0.8, `only ${r.reads.requests} reads were sent`);
  });
});
