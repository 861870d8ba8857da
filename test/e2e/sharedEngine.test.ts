// The workers of one `sori serve` share engines: ceil(SORI_WORKERS / SORI_ENGINE_JOBS) engine processes, each
// running its workers' jobs at once (docs/engine.md, "One engine for the host"). By default two workers run two jobs
// at once through one engine process, on a decoder per core; with SORI_ENGINE_JOBS=1 each worker has its own.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { manifest, normalizedCer } from "../helpers/cer.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const REFS = manifest(TESTDATA);
// Two English clips of 11 s and 6 s: each seconds of decoding, so the two jobs overlap in the engine.
const FILES = ["en/whisper_jfk.flac", "en/picovoice_leopard_test_en_librispeech.wav"];
const EN = { model_name: "whisper", language: "en" };

/** The engine processes a sori process has started. */
const enginePids = (p: SoriProcess): number[] =>
  spawnSync("pgrep", ["-P", String(p.child.pid), "-f", "sori_engine"], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number);

/** Each line the process logged with this message, parsed. */
const logged = (p: SoriProcess, msg: string): Record<string, unknown>[] =>
  p.logs.filter((l) => l.includes(`"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);

describe("workers sharing engines", { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  const procs: SoriProcess[] = [];
  after(async () => {
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const serve = async (extra: Record<string, string>): Promise<{ sori: SoriProcess; token: string }> => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    // Debug: the engine's own log lines (how many jobs it runs at once) reach the process's log.
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_POLL_MS: "100", SORI_LOG_LEVEL: "debug", ...extra };
    const c = createClient(env);
    const sori = await startSori("serve", env);
    procs.push(sori);
    return { sori, token: await authenticate(sori.url, c.client_id, c.client_secret) };
  };

  it("by default two workers, two jobs at once, one engine process with a decoder per core", async () => {
    const { sori, token } = await serve({ SORI_WORKERS: "2" });
    const ids = await Promise.all(
      FILES.map(async (f) => String((await submit(sori.url, token, path.join(TESTDATA, f), EN)).body.id)),
    );
    const bodies = await Promise.all(ids.map((id) => waitFinal(sori.url, token, id)));
    for (const [i, file] of FILES.entries()) {
      const body = bodies[i];
      assert.equal(body.status, "completed", JSON.stringify(body));
      const text = body.results.utterances.map((u: { msg: string }) => u.msg).join(" ");
      assert.ok(normalizedCer(text, REFS.get(file) ?? "") < 0.15, text);
    }
    assert.equal(enginePids(sori).length, 1, "one engine process for the two workers");
    // Both jobs ran at once: each started before the other completed, by two workers.
    const started = logged(sori, "job started");
    const completed = logged(sori, "job completed");
    assert.deepEqual(new Set(started.map((l) => l.job_id)), new Set(ids));
    assert.equal(new Set(started.map((l) => l.worker)).size, 2, "each job on a worker of its own");
    const firstDone = Math.min(...completed.map((l) => Number(l.time)));
    assert.ok(
      started.every((l) => Number(l.time) < firstDone),
      "both jobs were in flight at once",
    );
    const cores = availableParallelism();
    assert.ok(
      sori.logs.some((l) => l.includes(`2 transcribe jobs in flight, ${cores} decoders`)),
      "the engine was told SORI_ENGINE_JOBS and SORI_ENGINE_DECODERS",
    );
  });

  it("SORI_ENGINE_JOBS=1: an engine per worker", async () => {
    const { sori, token } = await serve({ SORI_WORKERS: "2", SORI_ENGINE_JOBS: "1" });
    const ids = await Promise.all(
      FILES.map(async (f) => String((await submit(sori.url, token, path.join(TESTDATA, f), EN)).body.id)),
    );
    for (const id of ids) assert.equal((await waitFinal(sori.url, token, id)).status, "completed");
    assert.equal(enginePids(sori).length, 2);
    assert.ok(sori.logs.some((l) => l.includes("1 transcribe jobs in flight")));
  });
});
