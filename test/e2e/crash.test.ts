// No accepted job is lost: kill -9 the worker, the engine, or the API process mid-job, and every job still ends
// completed. API and worker run as separate processes sharing the data dir, as in a scale-out deployment.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const LONG = path.join(TESTDATA, "en/earnings22_1_4482311_3_62.wav"); // 60 s: several seconds of work
const SHORT = path.join(TESTDATA, "en/whisper_jfk.flac");
const CONFIG = { model_name: "whisper", language: "detect", language_candidates: ["en"] };

interface JobRow {
  state: string;
  attempts: number;
  progress: number;
}

describe("crash recovery", () => {
  const dataDir = tempDataDir();
  // A short lease so that a dead worker's job is reclaimed within seconds.
  const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_LEASE_S: "2", SORI_POLL_MS: "200" };
  const procs: SoriProcess[] = [];
  let api: SoriProcess;
  let token: string;

  const start = async (command: "serve" | "worker", args: string[] = []): Promise<SoriProcess> => {
    const p = await startSori(command, env, args);
    procs.push(p);
    return p;
  };
  const job = (id: string): JobRow => {
    const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
    try {
      return db
        .prepare(
          "SELECT t.state, t.attempts, t.progress FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' WHERE j.id = ?",
        )
        .get(id) as JobRow;
    } finally {
      db.close();
    }
  };
  const until = async (what: string, check: () => boolean, timeoutMs = 120_000): Promise<void> => {
    const end = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** kill -9 a process and its children (the worker's engine), as a host crash would. */
  const killHard = (p: SoriProcess, withChildren: boolean): Promise<void> => {
    if (withChildren) spawnSync("pkill", ["-KILL", "-P", String(p.child.pid)]);
    return p.stop("SIGKILL");
  };
  const enginePid = (worker: SoriProcess): number => {
    const out = spawnSync("pgrep", ["-P", String(worker.child.pid), "-f", "sori_engine"], {
      encoding: "utf8",
    }).stdout.trim();
    assert.ok(out, "the worker has an engine process");
    return Number(out.split("\n")[0]);
  };

  before(async () => {
    const c = createClient(env);
    api = await start("serve", ["--no-workers"]);
    token = await authenticate(api.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
  });

  it("kill -9 of the worker mid-job: another worker completes the job after the lease expires", async () => {
    const worker = await start("worker");
    const id = String((await submit(api.url, token, LONG, CONFIG)).body.id);
    await until("job running", () => job(id).state === "running");
    await new Promise((r) => setTimeout(r, 1500)); // well into decoding
    await killHard(worker, true);
    assert.equal(job(id).state, "running", "the killed worker could not record anything");

    await start("worker");
    const body = await waitFinal(api.url, token, id);
    assert.equal(body.status, "completed", JSON.stringify(body));
    assert.ok(body.results.utterances.length > 0);
    assert.equal(job(id).attempts, 2);
  });

  it("kill -9 of the engine mid-job: the worker restarts it and retries the job", async () => {
    const worker = procs.at(-1)!;
    const id = String((await submit(api.url, token, LONG, CONFIG)).body.id);
    await until("job running", () => job(id).state === "running");
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(enginePid(worker), "SIGKILL");

    const body = await waitFinal(api.url, token, id);
    assert.equal(body.status, "completed", JSON.stringify(body));
    assert.equal(job(id).attempts, 2);
  });

  it("kill -9 of the API with jobs queued: after a restart every accepted job completes", async () => {
    await killHard(procs.at(-1)!, true); // no worker: the jobs stay queued
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(String((await submit(api.url, token, SHORT, CONFIG)).body.id));
    await killHard(api, false);

    api = await start("serve", ["--no-workers"]);
    await start("worker");
    for (const id of ids) {
      const body = await waitFinal(api.url, token, id); // the token outlives the restart: the key is in the data dir
      assert.equal(body.status, "completed", JSON.stringify(body));
    }
  });
});
