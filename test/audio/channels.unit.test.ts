// use_multi_channel in the pipeline, with a stand-in engine: one transcription per channel, spk = channel index,
// merged in time order, progress across channels, and the channel cap.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Engine } from "../../src/engine/client.js";
import { EngineError, type TranscribeParams, type TranscribeResult } from "../../src/engine/protocol.js";
import { MAX_CHANNELS, mergeByTime, transcribeChannels } from "../../src/pipeline/channels.js";

const PARAMS = { audio_path: "/x.wav", language_mode: "fixed", language: "ko" } as unknown as TranscribeParams;

function fakeEngine(channels: number, segmentsOf: (channel: number | undefined) => [number, number, string][]) {
  const calls: (number | undefined)[] = [];
  const engine = {
    probe: async () => ({ format: "wav", duration_s: 10, channels, sample_rate: 16000 }),
    transcribe: async (p: TranscribeParams, o: { onProgress?: (f: number) => void }): Promise<TranscribeResult> => {
      calls.push(p.channel);
      o.onProgress?.(0.5);
      o.onProgress?.(1);
      const segments = segmentsOf(p.channel).map(([start, end, text]) => ({
        start,
        end,
        text,
        language: "ko",
        avg_logprob: -0.2,
        no_speech_prob: 0.01,
      }));
      return { duration_s: 10, language: "ko", language_probs: { ko: 1 }, segments };
    },
  } as unknown as Engine;
  return { engine, calls };
}

describe("transcribeChannels", () => {
  it("transcribes each channel, spk = channel index, in time order", async () => {
    const { engine, calls } = fakeEngine(2, (ch) =>
      ch === 0
        ? [
            [0, 1, "a"],
            [4, 5, "c"],
          ]
        : [
            [2, 3, "b"],
            [4, 4.5, "d"],
          ],
    );
    const progress: number[] = [];
    const out = await transcribeChannels(engine, PARAMS, {
      wordTimestamps: false,
      timeoutMs: 1000,
      onProgress: (f) => progress.push(f),
    });
    assert.deepEqual(calls, [0, 1]);
    assert.deepEqual(
      out.map((u) => [u.msg, u.spk, u.start_at]),
      [
        ["a", 0, 0],
        ["b", 1, 2000],
        ["c", 0, 4000],
        ["d", 1, 4000],
      ],
    );
    assert.deepEqual(progress, [0.25, 0.5, 0.75, 1]);
  });

  it("a mono file is transcribed once, as it is, with spk 0", async () => {
    const { engine, calls } = fakeEngine(1, () => [[0, 1, "a"]]);
    const out = await transcribeChannels(engine, PARAMS, { wordTimestamps: false, timeoutMs: 1000 });
    assert.deepEqual(calls, [undefined]);
    assert.deepEqual(
      out.map((u) => u.spk),
      [0],
    );
  });

  it(`more than ${MAX_CHANNELS} channels is refused as undecodable`, async () => {
    const { engine, calls } = fakeEngine(MAX_CHANNELS + 1, () => []);
    await assert.rejects(
      transcribeChannels(engine, PARAMS, { wordTimestamps: false, timeoutMs: 1000 }),
      (e: unknown) => e instanceof EngineError && e.code === "audio_decode_failed",
    );
    assert.deepEqual(calls, []);
  });

  it("mergeByTime orders by start, then channel", () => {
    const u = (start_at: number, spk: number) => ({ start_at, duration: 1, msg: "x", spk, lang: "ko" });
    assert.deepEqual(
      mergeByTime([
        [u(5, 0), u(9, 0)],
        [u(1, 1), u(5, 1)],
      ]).map((x) => [x.start_at, x.spk]),
      [
        [1, 1],
        [5, 0],
        [5, 1],
        [9, 0],
      ],
    );
  });
});
