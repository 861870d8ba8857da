// The stream engine's step batcher (src/streaming/steps.ts) over the real engine and model: after a step that spent
// time on interims, interims are held back for t × (1/share − 1), but not those of an utterance that has shown
// nothing yet (its first words). A share of 0.001 holds interims back for the rest of the test once one was decoded.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { Engine } from "../../src/engine/client.js";
import { StepBatcher } from "../../src/streaming/steps.js";
import { ROOT, TESTDATA } from "../helpers/server.js";
import { phoneCopy } from "./phoneCopy.js";

const engine = new Engine({ python: path.join(ROOT, ".venv", "bin", "python") });
after(() => engine.stop());
const pcm = fs.readFileSync(phoneCopy(path.join(TESTDATA, "ko", "deeply_anechoic_sub100120a00053.wav")));
const STEP_BYTES = 8000 * 2 * 0.5; // half a second of 8 kHz s16le

/** Feeds the clip's first `seconds` in half-second steps, each asking for an interim; returns which steps got one. */
async function feed(session: string, firstWords: boolean, seconds: number): Promise<boolean[]> {
  await engine.streamOpen({
    session,
    sample_rate: 8000,
    epd_time: 10, // no end point inside the test: every step may be an interim
    decode: {
      model: {
        path: path.join(ROOT, "models", "whisper-base"),
        device: "cpu",
        compute_type: "int8",
        beam_size: 1,
        cpu_threads: 0,
        vad: false,
      },
      language_mode: "fixed",
      language: "ko",
      language_candidates: null,
      word_timestamps: false,
      initial_prompt: null,
      hotwords: null,
    },
  });
  const steps = new StepBatcher(engine, 0.001);
  const decoded: boolean[] = [];
  for (let at = 0; at < seconds * 2 * STEP_BYTES; at += STEP_BYTES) {
    const chunk = pcm.subarray(at, at + STEP_BYTES).toString("base64");
    const r = await steps.step({ session, pcm: chunk, interim: true, finalize: false, finish: false }, firstWords);
    decoded.push(r.interim);
  }
  await engine.streamClose(session);
  return decoded;
}

describe("stream step batcher, real engine", () => {
  it("holds interims back after one was decoded", async () => {
    const decoded = await feed("held", false, 4);
    const first = decoded.indexOf(true);
    assert.ok(first >= 0, "the speech got an interim");
    assert.deepEqual(
      decoded.slice(first + 1),
      decoded.slice(first + 1).map(() => false),
    );
  });

  it("decodes an utterance's first words even while interims are held back", async () => {
    const decoded = await feed("first-words", true, 4);
    assert.ok(decoded.filter(Boolean).length >= 2, `interims at ${decoded.map(Number).join("")}`);
  });
});
