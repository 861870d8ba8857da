// The enrollment and identification stages against a stand-in engine (its answers as the `voiceprint` op gives
// them): the refusals an enrollment maps the engine's findings to, that each utterance's own audio is asked for and
// checked, and that a job never compares voiceprints of another model than the engine's.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInput, UnsupportedAudio } from "../../src/domain/errors.js";
import type { Engine } from "../../src/engine/client.js";
import { EngineError, type VoiceprintParams, type VoiceprintResult } from "../../src/engine/protocol.js";
import { enrollVoice, identifySpeakers, SPEAKER_OPTIONS } from "../../src/speakers/index.js";

const standIn = (answer: (p: VoiceprintParams) => VoiceprintResult | Error) => {
  const seen: VoiceprintParams[] = [];
  const engine = {
    async voiceprint(p: VoiceprintParams) {
      seen.push(p);
      const a = answer(p);
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as Engine;
  return { engine, seen };
};
const one = (x: number): number[] => [x, Math.sqrt(1 - x * x)];

describe("enrollVoice", () => {
  const enroll = (r: VoiceprintResult | Error) =>
    enrollVoice(standIn(() => r).engine, ["/a.wav"], SPEAKER_OPTIONS, 1000);

  it("gives the voiceprint of one voice with enough speech", async () => {
    const v = await enroll({
      model: "m",
      voices: [{ speech_s: 12, embedding: one(0.5), narrowband: false, embedding_phone: one(0.6), voices: 1 }],
    });
    assert.deepEqual(v, { model: "m", embedding: one(0.5), embeddingPhone: one(0.6), speechS: 12 });
  });

  it("refuses several voices, too little or too much speech, and undecodable audio", async () => {
    await assert.rejects(
      enroll({ model: "m", voices: [{ speech_s: 30, embedding: one(0.5), narrowband: false, voices: 2 }] }),
      (e) => {
        return e instanceof InvalidInput && /several voices \(2 found\)/.test(e.message);
      },
    );
    await assert.rejects(
      enroll({ model: "m", voices: [{ speech_s: 4.2, embedding: one(0.5), narrowband: false, voices: 1 }] }),
      (e) => {
        return e instanceof InvalidInput && /too little speech to enroll: 4\.2 s found, at least 5 s/.test(e.message);
      },
    );
    await assert.rejects(
      enroll({ model: "m", voices: [{ speech_s: 0, embedding: null, narrowband: false, voices: 0 }] }),
      InvalidInput,
    );
    await assert.rejects(
      enroll({ model: "m", voices: [{ speech_s: 301, embedding: one(0.5), narrowband: false, voices: 1 }] }),
      /too much/,
    );
    await assert.rejects(enroll(new EngineError("audio_decode_failed", "bad")), UnsupportedAudio);
    await assert.rejects(enroll(new EngineError("engine_crashed", "gone")), EngineError);
  });
});

describe("identifySpeakers", () => {
  const utterances = [
    { start_at: 0, duration: 5000, msg: "a", spk: 0, lang: "ko" },
    { start_at: 6000, duration: 5000, msg: "b", spk: 1, lang: "ko" },
  ];
  const spans = new Map<number, [number, number][]>([
    [0, [[0, 5]]],
    [1, [[6, 11]]],
  ]);

  it("names the matched speaker's utterances, asks for the channels of a multi-channel job", async () => {
    const { engine, seen } = standIn(() => ({
      model: "m",
      voices: [
        { speech_s: 5, embedding: one(0.99) }, // the two speakers
        { speech_s: 5, embedding: one(0.0) },
        { speech_s: 5, embedding: one(0.98) }, // then each utterance alone
        { speech_s: 5, embedding: one(0.0) },
      ],
    }));
    const known = [{ id: "k", name: "Kim", model: "m", embedding: one(1) }];
    const input = { audioPath: "/a.wav", spans, channels: true, known, maxAudioS: 60 };
    const out = await identifySpeakers(utterances, input, engine, SPEAKER_OPTIONS, { timeoutMs: 1000 });
    assert.deepEqual(
      out.map((u) => u.spk_name),
      ["Kim", undefined],
    );
    assert.deepEqual(
      seen[0]!.voices.map((v) => [v.parts[0]!.channel, v.parts[0]!.spans]),
      [
        [0, [[0, 5]]],
        [1, [[6, 11]]],
        [0, [[0, 5]]],
        [1, [[6, 11]]],
      ],
    );
  });

  it("leaves an utterance unnamed when its own audio is not the voice its speaker was matched to", async () => {
    const { engine } = standIn(() => ({
      model: "m",
      voices: [
        { speech_s: 5, embedding: one(0.99) },
        { speech_s: 5, embedding: one(0.0) },
        { speech_s: 5, embedding: one(0.1) }, // utterance 0: someone else, merged into Kim's cluster
        { speech_s: 5, embedding: one(0.0) },
      ],
    }));
    const known = [{ id: "k", name: "Kim", model: "m", embedding: one(1) }];
    const input = { audioPath: "/a.wav", spans, channels: false, known, maxAudioS: 60 };
    const out = await identifySpeakers(utterances, input, engine, SPEAKER_OPTIONS, { timeoutMs: 1000 });
    assert.ok(out.every((u) => u.spk_name === undefined));
  });

  it("never compares a voiceprint of another model than the engine's", async () => {
    const { engine } = standIn(() => ({
      model: "new",
      voices: [
        { speech_s: 5, embedding: one(1) },
        { speech_s: 5, embedding: one(0) },
        { speech_s: 5, embedding: one(1) },
        { speech_s: 5, embedding: one(0) },
      ],
    }));
    const known = [{ id: "k", name: "Kim", model: "old", embedding: one(1) }];
    const input = { audioPath: "/a.wav", spans, channels: false, known, maxAudioS: 60 };
    const out = await identifySpeakers(utterances, input, engine, SPEAKER_OPTIONS, { timeoutMs: 1000 });
    assert.ok(out.every((u) => u.spk_name === undefined));
  });
});
