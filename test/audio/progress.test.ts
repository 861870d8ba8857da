// Progress with the real engine and model: while a 2.5-minute recording is transcribed, the job
// row's `progress` rises from 0 to 1 without going back and takes values in between; the spec's read body has no
// progress field; and `sori transcribe` on a terminal draws a bar driven by the same events.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { authenticate, read, submit } from "../helpers/api.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

// The 26 Korean clips end to end with 1 s gaps (145 s): several batches of chunks, so several progress steps.
const BUILD = `
import sys, wave, numpy as np
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from sori_engine.audio import decode
root = Path(sys.argv[1])
files = sorted(line.split("\\t")[0] for line in (root / "MANIFEST.tsv").read_text().splitlines()[1:] if line.startswith("ko/"))
gap = np.zeros(16000, dtype=np.float32)
audio = np.concatenate([x for f in files for x in (decode(str(root / f)), gap)])
with wave.open(sys.argv[2], "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes((np.clip(audio, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes())
`;
const CONFIG = { model_name: "whisper", language: "ko" }; // beam 1: the cheaper decoding keeps the test short

function buildRecording(out: string): void {
  const python = path.join(ROOT, ".venv", "bin", "python");
  const r = spawnSync(python, ["-c", BUILD, TESTDATA, out, path.join(ROOT, "engine")], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
}

function hasKey(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => hasKey(v, key));
  if (value && typeof value === "object") return Object.entries(value).some(([k, v]) => k === key || hasKey(v, key));
  return false;
}

describe("progress of a real transcription", { timeout: 240_000 }, () => {
  const dataDir = tempDataDir();
  const wav = path.join(dataDir, "ko-recording.wav");
  // A 1 s lease: the worker renews it, and with it writes the latest progress, every 333 ms. The file's position
  // advances as its windows are done: 60 s windows, one decoder, so that steps between 0 and 1 last long enough to
  // be written however fast the host decodes (one 300 s window on two decoders went 0 -> 1 between two renewals).
  const env = {
    SORI_DATA_DIR: dataDir,
    SORI_PORT: "0",
    SORI_WORKERS: "1",
    SORI_POLL_MS: "100",
    SORI_LEASE_S: "1",
    SORI_ENGINE_WINDOW_S: "60",
    SORI_ENGINE_DECODERS: "1",
  };
  let sori: SoriProcess;
  let token: string;

  before(async () => {
    buildRecording(wav);
    const c = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await sori?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("the job's progress rises monotonically from 0 to 1; the read body has no progress", async (t) => {
    const r = await submit(sori.url, token, wav, CONFIG);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = String(r.body.id);
    const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
    const seen: { state: string; progress: number }[] = [];
    try {
      const row = db.prepare(
        "SELECT t.state, t.progress FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' WHERE j.id = ?",
      );
      const deadline = Date.now() + 200_000;
      let lastRead = 0;
      for (;;) {
        const job = row.get(id) as { state: string; progress: number };
        if (seen.length === 0 || seen.at(-1)!.progress !== job.progress || seen.at(-1)!.state !== job.state)
          seen.push(job);
        if (job.state === "completed" || job.state === "failed") break;
        assert.ok(Date.now() < deadline, `job not final: ${JSON.stringify(seen)}`);
        // While a job runs, the spec's body is "transcribing" with nothing else to show for it (read at most once a
        // second: the API limits polling).
        if (job.state === "running" && Date.now() - lastRead > 1000) {
          lastRead = Date.now();
          const running = await read(sori.url, token, id);
          assert.equal(running.status, 200, JSON.stringify(running.body));
          assert.ok(!hasKey(running.body, "progress"), JSON.stringify(running.body));
        }
        await new Promise((res) => setTimeout(res, 50));
      }
    } finally {
      db.close();
    }
    t.diagnostic(`progress seen: ${seen.map((s) => `${s.state}:${s.progress.toFixed(2)}`).join(" ")}`);
    const values = seen.map((s) => s.progress);
    assert.equal(values[0], 0);
    assert.equal(seen.at(-1)!.state, "completed");
    assert.equal(values.at(-1), 1);
    for (const [i, v] of values.entries())
      assert.ok(i === 0 || v >= values[i - 1]!, `progress went back: ${values.join(", ")}`);
    assert.ok(
      seen.some((s) => s.state === "running" && s.progress > 0 && s.progress < 1),
      `no progress while running: ${JSON.stringify(seen)}`,
    );

    await new Promise((res) => setTimeout(res, 1000));
    const { status, body } = await read(sori.url, token, id);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.status, "completed");
    assert.ok(body.results.utterances.length > 10);
    assert.ok(!hasKey(body, "progress"), "the spec's read body stays unchanged: no progress field");
  });

  it("`sori transcribe` on a terminal draws the progress bar from the engine's progress", async (t) => {
    // script(1) gives the CLI a pseudo-terminal, so it draws the bar as it would for a user.
    const cmd = [
      process.execPath,
      "--import",
      "tsx",
      path.join(ROOT, "src/cli/main.ts"),
      "transcribe",
      wav,
      "--config",
      JSON.stringify(CONFIG),
    ]
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(" ");
    const child = spawn("script", ["-qfec", cmd, "/dev/null"], {
      env: { ...process.env, ...env, COLUMNS: "120" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
    const code = await new Promise<number | null>((res) => child.once("exit", res));
    assert.equal(code, 0, out.slice(-2000));
    const percents = [...out.matchAll(/(\d{1,3})% \| ETA/g)].map((m) => Number(m[1]));
    t.diagnostic(`bar percentages drawn: ${[...new Set(percents)].join(" ")}`);
    assert.ok(percents.includes(0) && percents.includes(100), out.slice(0, 2000));
    assert.ok(
      percents.some((p) => p > 0 && p < 100),
      `no intermediate step on the bar: ${[...new Set(percents)].join(" ")}`,
    );
    for (const [i, p] of percents.entries())
      assert.ok(i === 0 || p >= percents[i - 1]!, `bar went back: ${percents.join(" ")}`);
    assert.match(out, /"status": "completed"/);
    assert.match(out, /"spk_type": "NORMAL"/, "prints the read body's form");
  });
});
