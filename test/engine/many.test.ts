// Many requests in flight through one engine (docs/engine.md, "Many jobs in one engine"): two transcriptions at
// once each get their own answer, a ping is not queued behind them, and an aborted one is cancelled at once.
import assert from "node:assert/strict";
import path from "node:path";
import { after, it } from "node:test";
import { Engine } from "../../src/engine/client.js";
import { EngineError, type TranscribeParams } from "../../src/engine/protocol.js";
import { ROOT, TESTDATA } from "../helpers/server.js";

const engine = new Engine({ python: path.join(ROOT, ".venv", "bin", "python"), env: { SORI_ENGINE_JOBS: "2" } });
after(() => engine.stop());

const params = (file: string): TranscribeParams => ({
  audio_path: path.join(TESTDATA, file),
  model: {
    path: path.join(ROOT, "models", "whisper-base"),
    device: "cpu",
    compute_type: "int8",
    beam_size: 1,
    cpu_threads: 0,
    vad: true,
  },
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
  const long = engine.transcribe(params("en/earnings22_1_4482311_3_62.wav")).then((r) => {
    finished.push("long");
    return r;
  });
  const short = engine.transcribe(params("en/whisper_jfk.flac")).then((r) => {
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
  const cancelled = engine.transcribe(params("en/earnings22_1_4482311_3_62.wav"), { signal: abort.signal });
  const kept = engine.transcribe(params("en/whisper_jfk.flac"));
  await new Promise((r) => setTimeout(r, 200)); // both sent: the cancel finds the long one in flight
  abort.abort();
  await assert.rejects(cancelled, (e: unknown) => e instanceof EngineError && e.code === "cancelled");
  assert.ok((await kept).segments.length > 0);
});
