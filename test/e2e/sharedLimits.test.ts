// Two API hosts (`sori serve --no-workers`, separate processes and data dirs) against one PostgreSQL database:
// a client's read rate (A0003), its concurrency bound (A0002) and its quota (A0001) are enforced once for both,
// not once per host (docs/deployment.md, "Limits shared across hosts"). No worker runs, so submitted jobs stay
// in flight.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, submit } from "../helpers/api.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const SHORT = path.join(TESTDATA, "en/whisper_jfk.flac"); // 11 s
const CONFIG = { model_name: "whisper", language: "detect", language_candidates: ["en"] };
const skip = (await pgUnavailable()) ?? false;

describe("limits shared by two API hosts on one PostgreSQL", { skip }, () => {
  let db: PgDatabase;
  let hosts: SoriProcess[] = [];
  const dirs: string[] = [];

  const host = async (env: NodeJS.ProcessEnv): Promise<SoriProcess> => {
    const dir = tempDataDir();
    dirs.push(dir);
    if (dirs.length > 1) fs.copyFileSync(path.join(dirs[0]!, "jwt.key"), path.join(dir, "jwt.key"));
    const p = await startSori("serve", { SORI_DATABASE_URL: db.url, SORI_PORT: "0", SORI_DATA_DIR: dir, ...env }, [
      "--no-workers",
    ]);
    hosts.push(p);
    return p;
  };
  // A token from host 0 works on host 1: they share jwt.key, as the deployment guide says to.
  const readStatus = async (h: SoriProcess, token: string): Promise<number> => {
    const r = await fetch(`${h.url}/v1/transcribe/no-such-job`, { headers: { authorization: `Bearer ${token}` } });
    await r.arrayBuffer();
    return r.status; // 404 H0004 when the read was let through, 429 A0003 when it was over the rate
  };

  before(async () => {
    db = await createPgDatabase("sori_limits");
    const env = { SORI_DEFAULT_READ_BURST: "6", SORI_BLOB_STORE: "postgres" };
    await host(env);
    await host(env);
  });
  after(async () => {
    await Promise.all(hosts.map((h) => h.stop("SIGKILL")));
    hosts = [];
    await db?.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("one client's read burst is spent across both hosts together", async () => {
    const c = createClient({ SORI_DATABASE_URL: db.url, SORI_DATA_DIR: dirs[0] }, ["--read-rps", "0.05"]);
    const token = await authenticate(hosts[0]!.url, c.client_id, c.client_secret);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push(await readStatus(hosts[i % 2]!, token));
    // A burst of 6 (and 0.05/s of refill): 6 reads pass in all, 3 on each host; per-host buckets would pass 12.
    assert.deepEqual(
      statuses,
      [404, 404, 404, 404, 404, 404, 429, 429, 429, 429, 429, 429],
      `statuses ${statuses.join(",")}`,
    );
  });

  it("concurrent submits on both hosts pass the concurrency bound only as often as it allows", async () => {
    const c = createClient({ SORI_DATABASE_URL: db.url, SORI_DATA_DIR: dirs[0] }, ["--max-concurrent", "2"]);
    const token = await authenticate(hosts[0]!.url, c.client_id, c.client_secret);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => submit(hosts[i % 2]!.url, token, SHORT, CONFIG)),
    );
    const codes = results.map((r) => (r.status === 200 ? "ok" : String(r.body.code)));
    assert.equal(codes.filter((x) => x === "ok").length, 2, codes.join(","));
    assert.ok(
      codes.every((x) => x === "ok" || x === "A0002"),
      codes.join(","),
    );
  });

  it("concurrent submits on both hosts cannot go over the quota together", async () => {
    // 11 s per file, a quota of 30 s: two files fit, the third does not, whichever host takes it.
    const c = createClient({ SORI_DATABASE_URL: db.url, SORI_DATA_DIR: dirs[0] }, ["--quota-hours", String(30 / 3600)]);
    const token = await authenticate(hosts[1]!.url, c.client_id, c.client_secret);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => submit(hosts[i % 2]!.url, token, SHORT, CONFIG)),
    );
    const codes = results.map((r) => (r.status === 200 ? "ok" : String(r.body.code)));
    assert.equal(codes.filter((x) => x === "ok").length, 2, codes.join(","));
    assert.ok(
      codes.every((x) => x === "ok" || x === "A0001"),
      codes.join(","),
    );
  });
});
