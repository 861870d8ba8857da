// Cross-tenant access on the PostgreSQL store: another client's job cannot be read (plain or refined), exported,
// deleted or listed; the answer is 403 H0003 (docs/errors.md) and the job is untouched. The control requests show
// the owner can do each of those things, so the refusals are about the tenant, not the job.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { authenticate, submit } from "../helpers/api.js";
import { createPgDatabase, type PgDatabase } from "../helpers/pgDatabase.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");
const UTTERANCES = [{ start_at: 0, duration: 2000, msg: "alice's secret words", spk: 0, lang: "en" }];

describe("cross-tenant isolation (PostgreSQL store)", () => {
  let pgDb: PgDatabase | undefined;
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let aliceToken: string;
  let bobToken: string;
  let jobId: string;

  const call = async (token: string, method: string, url: string): Promise<{ status: number; text: string }> => {
    const r = await fetch(`${sori.url}${url}`, { method, headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, text: await r.text() };
  };

  before(async () => {
    pgDb = await createPgDatabase("sori_sec");
    env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_DATABASE_URL: pgDb.url,
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_REFINE: "false",
      SORI_DEFAULT_READ_RPS: "1000",
      SORI_DEFAULT_READ_BURST: "1000",
    };
    const alice = createClient(env, ["--tier", "enterprise"]);
    const bob = createClient(env, ["--tier", "enterprise"]);
    sori = await startSori("serve", env);
    aliceToken = await authenticate(sori.url, alice.client_id, alice.client_secret);
    bobToken = await authenticate(sori.url, bob.client_id, bob.client_secret);
    const r = await submit(sori.url, aliceToken, JFK, { use_refinement: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    jobId = String(r.body.id);
    // Finish the job in the store as a worker would (no workers run here), refinement included.
    const db = new pg.Client({ connectionString: env.SORI_DATABASE_URL });
    await db.connect();
    const now = Date.now();
    await db.query(`UPDATE tasks SET state = 'completed', finished_at = $2 WHERE job_id = $1 AND kind = 'transcribe'`, [
      jobId,
      now,
    ]);
    await db.query(
      `INSERT INTO tasks (job_id, kind, priority, state, attempts, max_attempts, run_at, progress, created_at, finished_at)
       VALUES ($1, 'refine', 1, 'completed', 1, 1, $2, 1, $2, $2)`,
      [jobId, now],
    );
    await db.query(`UPDATE jobs SET result = $2, expires_at = $3, refine_result = $2 WHERE id = $1`, [
      jobId,
      JSON.stringify({ utterances: UTTERANCES }),
      now + 3600_000,
    ]);
    await db.end();
  });

  after(async () => {
    await sori?.stop();
    await pgDb?.drop();
    if (env?.SORI_DATA_DIR) fs.rmSync(env.SORI_DATA_DIR, { recursive: true, force: true });
  });

  const routes = (): [string, string][] => [
    ["GET", `/v1/transcribe/${jobId}`],
    ["GET", `/v1/transcribe/${jobId}?result=refined`],
    ["GET", `/v1/transcribe/${jobId}/export?format=txt`],
    ["GET", `/v1/transcribe/${jobId}/export?format=srt`],
  ];

  it("control: the owner reads, refined-reads and exports the job", async () => {
    for (const [method, url] of routes()) {
      const r = await call(aliceToken, method, url);
      assert.equal(r.status, 200, `${url}: ${r.text}`);
      assert.ok(r.text.includes("alice's secret words") || r.text.includes("alice\\u0027s"), `${url}: ${r.text}`);
    }
  });

  it("another client: 403 H0003 on read, refined read, export and delete, and nothing of the job in the body", async () => {
    for (const [method, url] of [...routes(), ["DELETE", `/v1/transcribe/${jobId}`] as [string, string]]) {
      const r = await call(bobToken, method, url);
      assert.equal(r.status, 403, `${method} ${url}: ${r.text}`);
      assert.equal((JSON.parse(r.text) as { code: string }).code, "H0003");
      assert.ok(!r.text.includes("secret words"), r.text);
    }
    // The delete was refused: the owner still has the job.
    assert.equal((await call(aliceToken, "GET", `/v1/transcribe/${jobId}`)).status, 200);
  });

  it("another client's list does not show the job; the owner's does", async () => {
    const bobs = JSON.parse((await call(bobToken, "GET", "/v1/transcribe?limit=100")).text) as {
      transcribes: { id: string }[];
    };
    assert.deepEqual(
      bobs.transcribes.map((j) => j.id),
      [],
    );
    for (const status of ["completed", "transcribing", "failed"]) {
      const page = JSON.parse((await call(bobToken, "GET", `/v1/transcribe?status=${status}`)).text) as {
        transcribes: unknown[];
      };
      assert.deepEqual(page.transcribes, [], status);
    }
    const alices = JSON.parse((await call(aliceToken, "GET", "/v1/transcribe")).text) as {
      transcribes: { id: string }[];
    };
    assert.deepEqual(
      alices.transcribes.map((j) => j.id),
      [jobId],
    );
  });

  it("a list cursor forged from another client's position shows nothing of theirs", async () => {
    // Cursors are positions (seq), not grants: a forged one still lists only the caller's own jobs.
    for (const seq of [1, 2, 1000]) {
      const cursor = String(seq); // a cursor is the position itself (digits)
      const r = JSON.parse((await call(bobToken, "GET", `/v1/transcribe?cursor=${cursor}`)).text) as {
        transcribes: unknown[];
      };
      assert.deepEqual(r.transcribes, []);
    }
  });

  it("each client gets its own callback secret", async () => {
    const a = JSON.parse((await call(aliceToken, "GET", "/v1/callbacks/secret")).text) as { secret: string };
    const b = JSON.parse((await call(bobToken, "GET", "/v1/callbacks/secret")).text) as { secret: string };
    assert.ok(a.secret && b.secret && a.secret !== b.secret);
  });

  it("the owner can delete it; afterwards both clients get 404 H0004", async () => {
    assert.equal((await call(aliceToken, "DELETE", `/v1/transcribe/${jobId}`)).status, 200);
    for (const token of [aliceToken, bobToken]) {
      const r = await call(token, "GET", `/v1/transcribe/${jobId}`);
      assert.equal(r.status, 404);
      assert.equal((JSON.parse(r.text) as { code: string }).code, "H0004");
    }
  });
});
