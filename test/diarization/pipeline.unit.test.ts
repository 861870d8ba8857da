// runPipeline with use_diarization, against a stub engine: the words are asked for, `diarize` gets spk_count, the
// utterances come back split by speaker; without use_diarization the engine is never asked to diarize.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import type { Engine } from "../../src/engine/client.js";
import { defaultRegistry } from "../../src/engine/models.js";
import type { DiarizeParams, DiarizeResult, TranscribeParams, TranscribeResult } from "../../src/engine/protocol.js";
import { runPipeline } from "../../src/pipeline/run.js";

const transcript: TranscribeResult = {
  duration_s: 6,
  language: "ko",
  language_probs: { ko: 1 },
  segments: [
    {
      start: 0.2,
      end: 4.0,
      text: "안녕하세요 반갑습니다 네 저도요",
      language: "ko",
      avg_logprob: -0.2,
      no_speech_prob: 0.01,
      words: [
        { start: 0.2, end: 0.9, text: " 안녕하세요", probability: 0.9 },
        { start: 1.0, end: 1.8, text: " 반갑습니다", probability: 0.9 },
        { start: 2.6, end: 3.0, text: " 네", probability: 0.9 },
        { start: 3.1, end: 4.0, text: " 저도요", probability: 0.9 },
      ],
    },
  ],
};

function stubEngine(turns: DiarizeResult["turns"]) {
  const calls: { transcribe: TranscribeParams[]; diarize: DiarizeParams[] } = { transcribe: [], diarize: [] };
  const engine = {
    async transcribe(p: TranscribeParams) {
      calls.transcribe.push(p);
      return transcript;
    },
    async diarize(p: DiarizeParams): Promise<DiarizeResult> {
      calls.diarize.push(p);
      return { duration_s: 6, num_speakers: new Set(turns.map((t) => t.speaker)).size, turns };
    },
  } as unknown as Engine;
  return { engine, calls };
}

const run = (engine: Engine, config: object) =>
  runPipeline(
    { config: parseJobConfig(JSON.stringify(config)), audioPath: "/tmp/a.wav", maxAudioS: 3600 },
    { engine, models: defaultRegistry("/models"), timeoutFactor: 1 },
    6,
  );

describe("runPipeline with diarization", () => {
  const turns = [
    { start: 0.1, end: 2.0, speaker: 0 },
    { start: 2.4, end: 4.2, speaker: 1 },
  ];

  it("asks for words, passes spk_count, splits the utterance at the speaker change", async () => {
    const { engine, calls } = stubEngine(turns);
    const { utterances } = await run(engine, { use_diarization: true, diarization: { spk_count: 2 } });
    assert.equal(calls.transcribe[0]!.word_timestamps, true);
    assert.deepEqual(calls.diarize, [{ audio_path: "/tmp/a.wav", spk_count: 2, max_duration_s: 3600 }]);
    assert.deepEqual(
      utterances.map((u) => [u.spk, u.start_at, u.words]),
      [
        [0, 200, undefined],
        [1, 2600, undefined],
      ],
    );
    assert.ok(utterances[0]!.msg.includes("반갑습니다") && utterances[1]!.msg.includes("저도요"));
  });

  it("no speech turns: one speaker 0", async () => {
    const { engine } = stubEngine([]);
    const { utterances } = await run(engine, { use_diarization: true });
    assert.ok(utterances.length > 0 && utterances.every((u) => u.spk === 0));
  });

  it("use_diarization false: no diarize call, spk 0", async () => {
    const { engine, calls } = stubEngine(turns);
    const { utterances } = await run(engine, {});
    assert.equal(calls.diarize.length, 0);
    assert.ok(utterances.every((u) => u.spk === 0));
  });
});
