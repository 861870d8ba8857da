// Untrusted media is decoded in a decode process of its own (docs/security.md, "Untrusted media"): through `sori
// serve`, a decode process killed in the middle of a file fails that job H0010, at once and for good, while another
// job on the same engine completes; the service answers throughout and its engine never maps FFmpeg.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { joinClips } from "../helpers/joinClips.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";
import {
  descendants,
  enginesUnder,
  ffmpegMapped,
  makeFixtures,
  mutatedCopies,
  SIX,
} from "../helpers/untrustedMedia.js";

/** The decode processes (the Python child, not a bubblewrap around it) under `root` reading a file of `size`
 * bytes (a transcription's one process: it probes, then decodes). */
function streamingDecodes(root: number, size: number): number[] {
  return descendants(root).filter((pid) => {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (!argv.some((a) => a.endsWith("media/child.py")) || argv[0]!.includes("bwrap")) return false;
      return fs.statSync(`/proc/${pid}/fd/3`).size === size;
    } catch {
      return false;
    }
  });
}

describe("a decode process killed mid-file", { timeout: 600_000 }, () => {
  const dirs: string[] = [];
  let sori: SoriProcess | undefined;
  after(async () => {
    await sori?.stop("SIGKILL");
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("fails only its own job, H0010, once; the other job on the engine completes", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const long = path.join(dataDir, "..", `${path.basename(dataDir)}-long.wav`);
    dirs.push(long);
    // 145 s of speech; with 60 s windows its decode process waits on its pipe while the first window is recognized.
    const clips = fs
      .readdirSync(path.join(TESTDATA, "ko"))
      .filter((f) => f.endsWith(".wav"))
      .sort()
      .map((f) => `ko/${f}`);
    joinClips(long, clips);
    const env = {
      SORI_DATA_DIR: dataDir,
      SORI_PORT: "0",
      SORI_POLL_MS: "100",
      SORI_WORKERS: "2",
      SORI_ENGINE_JOBS: "2",
      SORI_ENGINE_WINDOW_S: "60",
      // One decoder: a job reads at most two windows ahead, so the kill lands while the file is still being read.
      SORI_ENGINE_DECODERS: "1",
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    const token = await authenticate(sori.url, c.client_id, c.client_secret);
    const ko = { language: "ko" };
    const victim = String((await submit(sori.url, token, long, ko)).body.id);
    const size = fs.statSync(long).size;
    let pid: number | undefined;
    for (let i = 0; i < 1200 && pid === undefined; i++) {
      pid = streamingDecodes(sori.child.pid!, size)[0];
      if (pid === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pid !== undefined, "the long job's decode process was never seen");
    const other = String(
      (await submit(sori.url, token, path.join(TESTDATA, "ko/picovoice_leopard_test_ko.wav"), ko)).body.id,
    );
    await new Promise((r) => setTimeout(r, 500));
    const engines = enginesUnder(sori.child.pid!);
    process.kill(pid, "SIGKILL");

    const failed = await waitFinal(sori.url, token, victim);
    assert.equal(failed.status, "failed", JSON.stringify(failed));
    assert.equal(failed.error.code, "H0010");
    assert.match(failed.error.message, /decode process died \(SIGKILL\)/);
    assert.ok(!failed.error.message.includes(dataDir), "no server path in the message");
    const done = await waitFinal(sori.url, token, other);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.ok(done.results.utterances.length > 0);
    // Final at once: no second attempt started (the job was started once), and the service answers on.
    const starts = sori.logs.filter((l) => l.includes('"job started"') && l.includes(victim));
    assert.equal(starts.length, 1, starts.join("\n"));
    assert.equal((await read(sori.url, token, victim)).status, 200);
    assert.ok(engines.length >= 1);
    for (const e of engines) assert.equal(ffmpegMapped(e), false, `engine ${e} maps FFmpeg`);
    assert.equal(ffmpegMapped(sori.child.pid!), false, "the API and worker process maps FFmpeg");
  });
});

describe("mutated uploads through the service", { timeout: 600_000 }, () => {
  const dirs: string[] = [];
  let sori: SoriProcess | undefined;
  after(async () => {
    await sori?.stop("SIGKILL");
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("each ends in a 4xx at submit or a job completed or failed with a code; the service answers throughout", async (t) => {
    const work = tempDataDir();
    dirs.push(work);
    const fx = makeFixtures(work, TESTDATA);
    const files = SIX.flatMap((name) => mutatedCopies(fx[name]!, work, `e2e-${name}`, 3));
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_POLL_MS: "100", SORI_DEFAULT_MAX_CONCURRENT: "100" };
    const c = createClient(env);
    const server = await startSori("serve", env);
    sori = server;
    const token = await authenticate(server.url, c.client_id, c.client_secret);
    const ends: Record<string, number> = {};
    const jobs: string[] = [];
    for (const f of files) {
      const r = await submit(server.url, token, f, { language: "ko" });
      if (r.status === 200) jobs.push(String(r.body.id));
      else {
        assert.equal(r.status, 400, JSON.stringify(r.body));
        assert.equal(r.body.code, "H0010", JSON.stringify(r.body));
        ends["400 H0010"] = (ends["400 H0010"] ?? 0) + 1;
      }
    }
    for (const id of jobs) {
      const body = await waitFinal(server.url, token, id);
      const end = body.status === "failed" ? `failed ${body.error.code}` : body.status;
      assert.ok(["completed", "failed H0010", "failed H0006"].includes(end), JSON.stringify(body));
      ends[end] = (ends[end] ?? 0) + 1;
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
    }
    t.diagnostic(`ends: ${JSON.stringify(ends)}`);
    assert.equal(files.length, 18);
    assert.ok((ends.completed ?? 0) > 0, JSON.stringify(ends));
    // Each job was started once: a bad file's failure is final (no retry), and no engine crashed.
    for (const id of jobs) {
      const starts = server.logs.filter((l) => l.includes('"job started"') && l.includes(id));
      assert.equal(starts.length, 1, starts.join("\n"));
    }
    assert.ok(!server.logs.some((l) => l.includes("engine_crashed")));
  });
});
