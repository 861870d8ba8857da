// Scale-out on separate network hosts: one API host and two worker hosts, each its own network
// namespace, joined by veth links to a bridge; PostgreSQL (a private cluster) listens on the bridge address, so
// every process reaches the store over the lab network only. Audio blobs are on a shared directory ("shared mount"
// mode: namespaces share the filesystem). 50 short jobs go through the API host; both workers must take some, every
// job must complete, and jobs must be claimed in submission order. Where SORI_BLOB_STORE=postgres exists, a smaller
// run repeats this with the audio in PostgreSQL and a separate data dir per host.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { loadConfig } from "../../src/config.js";
import { authenticate, read, submit } from "../helpers/api.js";
import { createNetLab, type NetLab, netnsUnavailable, startSoriIn } from "../helpers/netns.js";
import { type PgCluster, pgClusterUnavailable, startPgCluster } from "../helpers/pgCluster.js";
import { createClient, type SoriProcess, TESTDATA, tempDataDir } from "../helpers/server.js";

const JOBS = 50;
// Fewer jobs for the PostgreSQL blob store variant: it adds the blob transfer, not new scheduling behaviour.
const PG_BLOB_JOBS = 16;
// 2-second Korean clips: the whisper model (beam 1) decodes each in well under a second on an idle core.
const CLIPS = [
  "ko/deeply_studioapt_sub100101a00063.wav",
  "ko/deeply_anechoic_sub100122a00017.wav",
  "ko/deeply_dancestudio_sub100111a00062.wav",
].map((f) => path.join(TESTDATA, f));
const CONFIG = { model_name: "whisper", language: "ko" };
// A worker reads `now` before its claim statement runs, so two workers claiming at the same moment may record
// their (correctly ordered) claims a few milliseconds apart in the other order; this bounds that skew.
const CLAIM_SKEW_MS = 250;

/** SORI_BLOB_STORE=postgres is another change (docs/deployment.md); this variant runs only where it exists. */
function postgresBlobsMissing(): string | null {
  try {
    const c = loadConfig({ SORI_BLOB_STORE: "postgres", SORI_DATABASE_URL: "postgres://x@127.0.0.1/x" }) as {
      blobs?: { kind?: string };
    };
    return c.blobs?.kind === "postgres" ? null : "SORI_BLOB_STORE is not supported by this tree";
  } catch (e) {
    return `SORI_BLOB_STORE=postgres is not supported by this tree (${(e as Error).message})`;
  }
}

const skip =
  netnsUnavailable() ?? pgClusterUnavailable() ?? (CLIPS.every((f) => fs.existsSync(f)) ? null : "test clips missing");

// The suite runs two scenarios with real decoding on two workers: 221 s on an idle 2-core machine, past 300 s at load 10.
describe(
  "multi-host: API and two workers in separate network namespaces",
  { skip: skip ?? false, timeout: 600_000 },
  () => {
    let lab: NetLab;
    let cluster: PgCluster;
    let dataDir: string;

    before(async () => {
      lab = createNetLab(["api", "w1", "w2"]);
      cluster = await startPgCluster({ listen: [lab.hostAddr] });
      dataDir = tempDataDir();
    });
    after(() => {
      lab?.destroy(); // kills whatever still runs in the namespaces
      cluster?.destroy();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });

    /**
     * Runs one API host and two worker hosts on a fresh database, submits `jobs` clips through the API host and
     * checks the outcome. `blobEnv` picks the blob store; `sharedDir` false gives each host a data dir of its own
     * (no shared mount: the audio must travel through the blob store).
     */
    const scenario = async (
      label: string,
      jobs: number,
      blobEnv: Record<string, string>,
      sharedDir: boolean,
    ): Promise<void> => {
      const db = await cluster.createDatabase();
      const dirOf = (host: string): string => {
        const dir = sharedDir ? dataDir : path.join(dataDir, host);
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        return dir;
      };
      const env = {
        // Only the lab network leads to the store: a process that could not reach it over veth would fail here.
        SORI_DATABASE_URL: cluster.url(db, lab.hostAddr),
        SORI_POLL_MS: "100",
        SORI_LEASE_S: "30",
        SORI_DEFAULT_MAX_CONCURRENT: String(jobs * 2),
        SORI_DEFAULT_READ_RPS: "1000",
        SORI_DEFAULT_READ_BURST: "1000",
        ...blobEnv,
      };
      const apiEnv = { ...env, SORI_DATA_DIR: dirOf("api"), SORI_HOST: lab.hosts.api!.addr, SORI_PORT: "0" };
      const running: SoriProcess[] = [];
      try {
        const api = await startSoriIn(lab.hosts.api!.ns, "serve", apiEnv, ["--no-workers"]);
        running.push(api);
        const workers = await Promise.all(
          (["w1", "w2"] as const).map((w) =>
            startSoriIn(lab.hosts[w]!.ns, "worker", { ...env, SORI_DATA_DIR: dirOf(w) }),
          ),
        );
        running.push(...workers);
        assert.ok(api.url.includes(lab.hosts.api!.addr), `the API listens on its namespace's address: ${api.url}`);

        const c = createClient(apiEnv);
        const token = await authenticate(api.url, c.client_id, c.client_secret);
        const t0 = Date.now();
        const ids: string[] = [];
        for (let i = 0; i < jobs; i++) {
          const r = await submit(api.url, token, CLIPS[i % CLIPS.length]!, CONFIG);
          assert.equal(r.status, 200, JSON.stringify(r.body));
          ids.push(String(r.body.id));
        }

        const store = new pg.Client({ connectionString: cluster.url(db) });
        await store.connect();
        try {
          const deadline = Date.now() + 180_000;
          for (;;) {
            const { rows } = await store.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM tasks WHERE kind = 'transcribe' AND state IN ('queued', 'running')",
            );
            if (rows[0]!.n === 0) break;
            if (Date.now() > deadline) throw new Error(`${rows[0]!.n} jobs still unfinished after 180 s`);
            await new Promise((r) => setTimeout(r, 250));
          }
          const elapsed = (Date.now() - t0) / 1000;

          const { rows } = await store.query<{
            seq: number;
            id: string;
            state: string;
            attempts: number;
            started_at: number;
          }>(
            "SELECT j.seq, j.id, t.state, t.attempts, t.started_at FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' ORDER BY j.seq",
          );
          assert.equal(rows.length, jobs, "one row per accepted job");
          assert.deepEqual(
            rows.map((r) => r.id),
            ids,
            "seq follows submission order",
          );
          for (const r of rows) assert.equal(r.state, "completed", `job ${r.id}`);
          assert.ok(
            rows.every((r) => r.attempts === 1),
            "no job needed a second attempt",
          );

          // FIFO by claim time: started_at is the first claim's time. No job may have been claimed (beyond the
          // clock skew of simultaneous claims) before a job submitted earlier.
          let latestEarlierClaim = -Infinity;
          let skew = 0;
          for (const r of rows) {
            const at = Number(r.started_at);
            assert.ok(
              at >= latestEarlierClaim - CLAIM_SKEW_MS,
              `job seq ${r.seq} claimed at ${at}, before an earlier-submitted job (claimed at ${latestEarlierClaim})`,
            );
            skew = Math.max(skew, latestEarlierClaim - at);
            latestEarlierClaim = Math.max(latestEarlierClaim, at);
          }

          // Which worker ran each job: every worker logs "job completed" with the job id and its worker id.
          const ranBy = new Map<string, string>();
          workers.forEach((w, i) => {
            for (const line of w.logs) {
              if (!line.includes('"job completed"')) continue;
              const rec = JSON.parse(line) as { job_id: string; worker: string };
              assert.ok(!ranBy.has(rec.job_id), `job ${rec.job_id} completed twice`);
              ranBy.set(rec.job_id, `w${i + 1} (${rec.worker})`);
            }
          });
          assert.equal(ranBy.size, jobs, "every job completed on one of the worker hosts");
          const perWorker = workers.map((_, i) => [...ranBy.values()].filter((v) => v.startsWith(`w${i + 1} `)).length);
          assert.ok(
            perWorker.every((n) => n > 0),
            `both workers took jobs: ${perWorker.join(" + ")}`,
          );

          // Results are read back through the API host, as a client would.
          for (const id of [ids[0]!, ids[jobs - 1]!]) {
            const body = (await read(api.url, token, id)).body;
            assert.equal(body.status, "completed");
            assert.ok(body.results.utterances.length > 0, JSON.stringify(body));
          }
          console.log(
            `multihost (${label}): ${jobs} jobs in ${elapsed.toFixed(1)} s; per worker ${perWorker.join(" + ")}; ` +
              `largest claim-time inversion ${skew < 0 ? 0 : skew} ms`,
          );
        } finally {
          await store.end();
        }
      } finally {
        await Promise.all(running.map((p) => p.stop("SIGKILL")));
      }
    };

    it(`${JOBS} jobs through the API host, blobs on a shared directory: both workers take jobs, all complete, FIFO by claim time`, async () => {
      await scenario("shared-mount blobs", JOBS, {}, true);
    });

    it(
      "the same with blobs in PostgreSQL and no shared directory",
      { skip: postgresBlobsMissing() ?? false },
      async () => {
        await scenario("postgres blobs", PG_BLOB_JOBS, { SORI_BLOB_STORE: "postgres" }, false);
      },
    );
  },
);
