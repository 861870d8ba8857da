// Many requests in flight through one engine (docs/engine.md, "Many jobs in one engine"): two transcriptions at
// once each get their own answer, a ping is not queued behind them, and an aborted one is cancelled at once. The
// requests in flight may be different jobs', so one request's end never takes the others down: an aborted op fails
// alone at once, and a request past its budget fails alone unless the engine no longer answers a ping.
import assert from "node:assert/strict";
import path from "node:path";
import { after, it } from "node:test";
import { Engine } from "../../src/engine/client.js";
import { defaultRegistry } from "../../src/engine/models.js";
import { EngineError, type TranscribeParams } from "../../src/engine/protocol.js";
import { ROOT, TESTDATA } from "../helpers/server.js";

const PYTHON = path.join(ROOT, ".venv", "bin", "python");
const engineLog: string[] = [];
const engine = new Engine({ python: PYTHON, env: { SORI_ENGINE_JOBS: "2" }, onLog: (l) => engineLog.push(l) });
after(() => engine.stop());
const LONG = "en/earnings22_1_4482311_3_62.wav"; // 60 s: a second or more of decoding
const SHORT = "en/whisper_jfk.flac"; // 11 s

const params = (file: string): TranscribeParams => ({
  audio_path: path.join(TESTDATA, file),
  model: defaultRegistry(path.join(ROOT, "models")).whisper, // as the service sends it
  language_mode: "fixed",
  language: "en",
  language_candidates: null,
  word_timestamps: false,
  initial_prompt: null,
  hotwords: null,
  max_duration_s: null,
});

it("two transcriptions in flight at once each get their own words, and a ping is answered meanwhile", async () => {
  await engine.ping(); // the engine is up: what follows measures only the requests
  const finished: string[] = [];
  const long = engine.transcribe(params(LONG)).then((r) => {
    finished.push("long");
    return r;
  });
  const short = engine.transcribe(params(SHORT)).then((r) => {
    finished.push("short");
    return r;
  });
  await engine.ping();
  assert.deepEqual(finished, [], "the ping came back before either transcription");
  const [a, b] = await Promise.all([long, short]);
  assert.ok(a.duration_s > 30 && a.segments.length > 0);
  assert.ok(b.duration_s < 12 && b.segments.length > 0);
});

it("an aborted transcription is cancelled at once and the other goes on", async () => {
  const abort = new AbortController();
  const cancelled = engine.transcribe(params(LONG), { signal: abort.signal });
  const kept = engine.transcribe(params(SHORT));
  await new Promise((r) => setTimeout(r, 200)); // both sent: the cancel finds the long one in flight
  abort.abort();
  await assert.rejects(cancelled, (e: unknown) => e instanceof EngineError && e.code === "cancelled");
  assert.ok((await kept).segments.length > 0);
});

it("a transcription past its budget fails alone: the other goes on and the engine lives", async () => {
  await engine.ping();
  const pid = engine.pid;
  // Well under LONG's decoding on any host: with two decoders a fast 2-core host finishes it in about 1.4 s.
  const late = engine.transcribe(params(LONG), { timeoutMs: 300 });
  const kept = engine.transcribe(params(SHORT));
  await assert.rejects(late, (e: unknown) => e instanceof EngineError && e.code === "engine_timeout");
  assert.ok((await kept).segments.length > 0);
  assert.equal(engine.pid, pid, "the engine answered the check and was kept");
  // The engine was told to drop the late one: it answers it `cancelled` (an answer no one waits for any more).
  await engine.ping();
  assert.ok(
    engineLog.some((l) => l.includes("op=transcribe failed") && l.includes("cancelled")),
    engineLog.slice(-5).join("\n"),
  );
});

it("an aborted op other than transcribe fails at once; the engine answers the next request", async () => {
  const abort = new AbortController();
  const diarizing = engine.diarize(
    { audio_path: path.join(TESTDATA, LONG), spk_count: 0, max_duration_s: null },
    { signal: abort.signal },
  );
  await new Promise((r) => setTimeout(r, 200));
  const t0 = Date.now();
  abort.abort();
  await assert.rejects(diarizing, (e: unknown) => e instanceof EngineError && e.code === "cancelled");
  assert.ok(Date.now() - t0 < 100, "rejected without waiting for the engine");
  assert.ok((await engine.transcribe(params(SHORT))).segments.length > 0);
});

it("an engine that does not answer the check after a timeout is killed: the rest in flight fail as crashed", async () => {
  const hung = new Engine({ python: PYTHON, env: { SORI_ENGINE_JOBS: "2" }, checkTimeoutMs: 1000 });
  try {
    await hung.ping();
    const pid = hung.pid!;
    const late = hung.transcribe(params(LONG), { timeoutMs: 1000 });
    const other = hung.transcribe(params(SHORT));
    process.kill(pid, "SIGSTOP"); // hangs: answers nothing, not even the check's ping
    await assert.rejects(late, (e: unknown) => e instanceof EngineError && e.code === "engine_timeout");
    await assert.rejects(other, (e: unknown) => e instanceof EngineError && e.code === "engine_crashed");
    assert.throws(() => process.kill(pid, 0), "the hung engine was killed");
    await hung.ping(); // the next request starts a fresh engine
    assert.notEqual(hung.pid, pid);
  } finally {
    await hung.stop();
  }
});
