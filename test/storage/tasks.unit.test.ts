// The task lifecycle in the store (src/storage/tasks.ts) on both backends: insert and claim, leases and fencing,
// completion and failure, concurrent claimers. Times are passed explicitly, so leases and backoff need no sleeping.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { openStore, type Store } from "../../src/storage/db.js";
import { getJob } from "../../src/storage/jobs.js";
import { reapExpired } from "../../src/storage/tasks.js";
import { clientA, clientB, RETENTION, type StoreWhere, storeBackends, T, useStore } from "../helpers/storeSuite.js";

for (const [label, makeBackend, skip] of await storeBackends()) {
  describe(`tasks on ${label}`, { skip }, () => {
    const fx = useStore(makeBackend);
    const { addJob, task, job, lease, asClaimed, claim, complete, fail, release, renew } = fx;
    let where: StoreWhere;
    let store: Store;
    before(() => {
      ({ where, store } = fx);
    });

    describe("insert and claim", () => {
      it("a new job is queued with no attempt and no lease", async () => {
        const id = await addJob({ audio_s: 3.888 });
        const j = await job(id);
        assert.equal(j.state, "queued");
        assert.equal(j.attempts, 0);
        assert.equal(j.locked_by, null);
        assert.equal(j.lease_until, null);
        assert.equal(j.run_at, T);
        assert.equal(j.created_at, T);
        assert.equal(j.audio_s, 3.888);
        assert.equal(j.expired, 0);
        assert.equal(typeof j.seq, "number");
        assert.equal(await getJob(store, "missing"), undefined);
      });

      it("claims in submission (seq) order, one or several at a time", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push(await addJob({ client: i % 2 ? clientA : clientB }));
        const seqs = await Promise.all(ids.map(async (id) => (await job(id)).seq));
        assert.deepEqual(
          seqs,
          [...seqs].sort((a, b) => a - b),
          "seq grows with submission",
        );

        const [first] = await claim(store, lease("w1"), 1, T);
        assert.equal(first?.id, ids[0]);
        const two = await claim(store, lease("w1"), 2, T);
        assert.deepEqual(
          two.map((j) => j.id),
          ids.slice(1, 3),
        );
        const rest = await claim(store, lease("w2"), 10, T);
        assert.deepEqual(
          rest.map((j) => j.id),
          ids.slice(3),
        );
        assert.deepEqual(await claim(store, lease("w2"), 1, T), []);
      });

      it("a claim marks the job running, leased to the worker, with the attempt counted", async () => {
        const id = await addJob();
        const [c] = await claim(store, lease("w1", 5000), 1, T + 10);
        assert.ok(c);
        assert.equal(c.id, id);
        assert.equal(c.state, "running");
        assert.equal(c.locked_by, "w1");
        assert.equal(c.lease_until, T + 10 + 5000);
        assert.equal(c.attempts, 1);
        assert.equal(c.started_at, T + 10);
        assert.deepEqual(asClaimed(await task(id)), c, "the returned row is the stored row");
      });

      it("does not claim a job whose run_at is still ahead", async () => {
        const id = await addJob({ now: T + 5000 });
        assert.deepEqual(await claim(store, lease("w1"), 1, T + 4999), []);
        assert.equal((await claim(store, lease("w1"), 1, T + 5000))[0]?.id, id);
      });
    });

    describe("leases", () => {
      it("a claimed job is not claimed again while its lease is valid, and is after it expires", async () => {
        const id = await addJob();
        const [c1] = await claim(store, lease("w1", 1000), 1, T);
        assert.equal(c1?.attempts, 1);
        assert.deepEqual(await claim(store, lease("w2", 1000), 1, T + 500), []);
        assert.deepEqual(
          await reapExpired(store, RETENTION, T + 1000),
          { requeued: 0, failed: 0 },
          "lease_until itself is still valid",
        );
        assert.deepEqual(await claim(store, lease("w2", 1000), 1, T + 1000), []);

        assert.deepEqual(await reapExpired(store, RETENTION, T + 1001), { requeued: 1, failed: 0 });
        const requeued = await job(id);
        assert.equal(requeued.state, "queued");
        assert.equal(requeued.locked_by, null);
        assert.equal(requeued.attempts, 1);

        const [c2] = await claim(store, lease("w2", 1000), 1, T + 1001);
        assert.equal(c2?.id, id);
        assert.equal(c2?.attempts, 2);
        assert.equal(c2?.locked_by, "w2");
        assert.equal(c2?.started_at, T, "started_at keeps the first start");
      });

      it("a re-queued job keeps its place before later submissions", async () => {
        const first = await addJob();
        await claim(store, lease("w1", 1000), 1, T);
        const second = await addJob({ now: T + 100 });
        await reapExpired(store, RETENTION, T + 2000);
        assert.deepEqual(
          (await claim(store, lease("w2"), 2, T + 2000)).map((j) => j.id),
          [first, second],
        );
      });

      it("the worker that lost its lease can no longer complete, fail or renew the job (fencing)", async () => {
        const id = await addJob();
        const [c1] = await claim(store, lease("w1", 1000), 1, T);
        await reapExpired(store, RETENTION, T + 2000);
        await claim(store, lease("w2", 1000), 1, T + 2000);
        assert.equal(await complete(store, id, "w1", { utterances: [] }, RETENTION, T + 2100), false);
        assert.equal(
          await fail(store, c1!, "w1", { code: "E500", message: "x", retryable: true }, RETENTION, T + 2100),
          "lost",
        );
        assert.equal(await renew(id, lease("w1")), false);
        const j = await job(id);
        assert.equal(j.state, "running");
        assert.equal(j.locked_by, "w2");
        assert.equal(await complete(store, id, "w2", { utterances: [] }, RETENTION, T + 2200), true);
      });

      it("renewLease extends the owner's lease and records progress", async () => {
        const id = await addJob();
        const now = Date.now();
        await claim(store, lease("w1", 1000), 1, now);
        assert.equal(await renew(id, lease("w1", 60_000), 0.5), true);
        const j = await job(id);
        assert.equal(j.progress, 0.5);
        assert.ok(j.lease_until! >= now + 60_000 && j.lease_until! < Date.now() + 60_000 + 1, String(j.lease_until));
        assert.equal(await renew(id, lease("w2", 60_000)), false);
        assert.equal(await renew("missing", lease("w1")), false);
      });

      it("reapExpired fails a job with E500 once its attempts are used up", async () => {
        const id = await addJob({ max_attempts: 2 });
        await claim(store, lease("w1", 1000), 1, T);
        assert.deepEqual(await reapExpired(store, RETENTION, T + 1001), { requeued: 1, failed: 0 });
        await claim(store, lease("w2", 1000), 1, T + 1001);
        assert.deepEqual(await reapExpired(store, RETENTION, T + 2002), { requeued: 0, failed: 1 });
        const j = await job(id);
        assert.equal(j.state, "failed");
        assert.equal(j.error_code, "E500");
        assert.ok(j.error_message);
        assert.equal(j.attempts, 2);
        assert.equal(j.locked_by, null);
        assert.equal(j.finished_at, T + 2002);
        assert.equal(j.expires_at, T + 2002 + RETENTION);
        assert.deepEqual(await claim(store, lease("w3"), 1, T + 10_000), []);
      });

      it("releaseJob hands the job back untouched and gives the attempt back", async () => {
        const id = await addJob();
        await claim(store, lease("w1"), 1, T);
        await release(store, id, "w2"); // not the owner: nothing happens
        assert.equal((await job(id)).state, "running");
        await release(store, id, "w1");
        const j = await job(id);
        assert.deepEqual([j.state, j.attempts, j.locked_by, j.lease_until], ["queued", 0, null, null]);
        assert.equal((await claim(store, lease("w2"), 1, T))[0]?.attempts, 1);
      });
    });

    describe("complete and fail", () => {
      it("completeJob stores the result and the retention deadline, and clears the lease", async () => {
        const id = await addJob();
        await claim(store, lease("w1"), 1, T);
        const result = { utterances: [{ start_at: 0, duration: 1000, msg: "안녕", spk: 0, lang: "ko" }] };
        assert.equal(await complete(store, id, "w1", result, RETENTION, T + 500), true);
        const j = await job(id);
        assert.equal(j.state, "completed");
        assert.deepEqual(JSON.parse(j.result!), result);
        assert.equal(j.progress, 1);
        assert.equal(j.locked_by, null);
        assert.equal(j.lease_until, null);
        assert.equal(j.finished_at, T + 500);
        assert.equal(j.expires_at, T + 500 + RETENTION);
        assert.equal(await complete(store, id, "w1", result, RETENTION, T + 600), false, "only once");
        assert.deepEqual(
          await reapExpired(store, RETENTION, T + 10 * RETENTION),
          { requeued: 0, failed: 0 },
          "final jobs are not reaped",
        );
      });

      it("failJob retries with backoff while attempts remain, then fails for good", async () => {
        const id = await addJob({ max_attempts: 3 });
        const f = { code: "E500" as const, message: "engine crashed", retryable: true };

        const [a1] = await claim(store, lease("w1"), 1, T);
        assert.equal(await fail(store, a1!, "w1", f, RETENTION, T), "retried");
        let j = await job(id);
        assert.deepEqual(
          [j.state, j.locked_by, j.lease_until, j.run_at, j.error_code],
          ["queued", null, null, T + 1000, null],
        );
        assert.deepEqual(await claim(store, lease("w1"), 1, T + 999), [], "backoff: not before run_at");

        const [a2] = await claim(store, lease("w1"), 1, T + 1000);
        assert.equal(a2?.attempts, 2);
        assert.equal(await fail(store, a2!, "w1", f, RETENTION, T + 1000), "retried");
        assert.equal((await job(id)).run_at, T + 1000 + 2000, "backoff doubles");

        const [a3] = await claim(store, lease("w1"), 1, T + 3000);
        assert.equal(a3?.attempts, 3);
        assert.equal(await fail(store, a3!, "w1", f, RETENTION, T + 3000), "failed");
        j = await job(id);
        assert.equal(j.state, "failed");
        assert.equal(j.error_code, "E500");
        assert.equal(j.error_message, "engine crashed");
        assert.equal(j.finished_at, T + 3000);
        assert.equal(j.expires_at, T + 3000 + RETENTION);
        assert.equal(j.locked_by, null);
        assert.deepEqual(await claim(store, lease("w1"), 1, T + 100_000), []);
      });

      it("a failure that is not retryable is final at once", async () => {
        const id = await addJob({ max_attempts: 5 });
        const [c] = await claim(store, lease("w1"), 1, T);
        assert.equal(
          await fail(store, c!, "w1", { code: "H0010", message: "cannot decode", retryable: false }, RETENTION, T),
          "failed",
        );
        const j = await job(id);
        assert.deepEqual([j.state, j.error_code, j.attempts], ["failed", "H0010", 1]);
      });
    });

    describe("concurrent claimers", () => {
      it("never hand the same job to two workers", async () => {
        const total = 40;
        const ids = new Set<string>();
        for (let i = 0; i < total; i++) ids.add(await addJob());
        const got = new Map<string, string>(); // job id → worker
        for (let round = 0; round < 20 && got.size < total; round++) {
          const batches = await Promise.all(
            Array.from({ length: 4 }, (_, w) =>
              claim(store, lease(`w${w}`), 3, T).then((rows) => rows.map((r) => [r.id, `w${w}`] as const)),
            ),
          );
          for (const [id, worker] of batches.flat()) {
            assert.equal(got.has(id), false, `${id} claimed by ${got.get(id)} and ${worker}`);
            got.set(id, worker);
          }
        }
        assert.equal(got.size, total);
        assert.deepEqual(new Set(got.keys()), ids);
        for (const [id, worker] of got) {
          const j = await job(id);
          assert.equal(j.locked_by, worker);
          assert.equal(j.attempts, 1);
        }
      });

      it("separate connections pools (separate processes) claiming one job at a time share the queue without overlap", async () => {
        const total = 24;
        for (let i = 0; i < total; i++) await addJob();
        const others = [store, await openStore(where), await openStore(where)];
        try {
          const claimed: string[] = [];
          await Promise.all(
            Array.from({ length: 6 }, async (_, w) => {
              const s = others[w % others.length]!;
              for (;;) {
                const [j] = await claim(s, lease(`p${w}`), 1, T);
                if (!j) return;
                claimed.push(j.id);
              }
            }),
          );
          assert.equal(claimed.length, total);
          assert.equal(new Set(claimed).size, total);
        } finally {
          await others[1]!.close();
          await others[2]!.close();
        }
      });
    });
  });
}
