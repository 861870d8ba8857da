// The redacted copy of the audio (pii_redaction.audio, docs/pii.md) as plain functions: where each redacted span was
// said (its words' times), the margin, the tracks per channel, and the config's checks.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInput } from "../../src/domain/errors.js";
import { parseJobConfig, piiAudioMode } from "../../src/domain/jobConfig.js";
import { PII_TYPES } from "../../src/domain/pii.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { audioTracks, transcribedSpans, widen } from "../../src/pii/audio.js";
import { type Redaction, redactUtterances, redactWithTimes } from "../../src/pii/index.js";

const R: Redaction = { types: PII_TYPES, mode: "mask", min_digits: 9, key: Buffer.alloc(32, 1) };

/** An utterance whose words are its space-separated pieces, 500 ms each from `start`. */
function utt(msg: string, start: number, spk = 0): Utterance {
  const pieces = msg.split(" ");
  return {
    start_at: start,
    duration: pieces.length * 500,
    msg,
    spk,
    lang: "en",
    words: pieces.map((text, i) => ({ start_at: start + i * 500, duration: 450, text })),
  };
}

describe("redactWithTimes", () => {
  it("says where each span was said: its first word's start to its last word's end", () => {
    const input = [utt("my card is 4111 1111 1111 1111 thanks", 10_000)];
    const { utterances, said } = redactWithTimes(input, R);
    assert.deepEqual(utterances, redactUtterances(input, R), "the same redaction as redactUtterances");
    // Words 3..6 (the four groups): 11.5 s to 13.0 s + 450 ms.
    assert.deepEqual(said, [{ spk: 0, start_ms: 11_500, end_ms: 13_450 }]);
  });

  it("a digit run glued to a word takes the whole word's time; a span over a break is said in both utterances", () => {
    const glued = redactWithTimes([utt("call me Macat4155552671 please", 0)], R).said;
    assert.deepEqual(glued, [{ spk: 0, start_ms: 1000, end_ms: 1450 }]);
    const split = redactWithTimes([utt("my phone is 010 1234", 0, 1), utt("5678 okay", 3000, 1)], R).said;
    assert.deepEqual(split, [
      { spk: 1, start_ms: 1500, end_ms: 2450 },
      { spk: 1, start_ms: 3000, end_ms: 3450 },
    ]);
  });

  it("nothing redacted, nothing said", () => {
    assert.deepEqual(redactWithTimes([utt("the price is 3000 won", 0)], R).said, []);
  });
});

describe("audio tracks", () => {
  it("widen adds 250 ms each side, not before 0, and merges what then overlaps", () => {
    assert.deepEqual(
      widen([
        { spk: 0, start_ms: 100, end_ms: 900 },
        { spk: 0, start_ms: 1200, end_ms: 1500 },
        { spk: 0, start_ms: 5000, end_ms: 5100 },
      ]),
      [
        [0, 1.75],
        [4.75, 5.35],
      ],
    );
  });

  it("the mono downmix gets every span; each channel only its own, with its own words", () => {
    const said = {
      redacted: [
        { spk: 0, start_ms: 1000, end_ms: 2000 },
        { spk: 1, start_ms: 4000, end_ms: 5000 },
      ],
      transcribed: [
        { spk: 1, start_ms: 4000, end_ms: 5000 },
        { spk: 0, start_ms: 0, end_ms: 2000 },
      ],
    };
    assert.deepEqual(audioTracks(said, null), [
      {
        channel: null,
        spans: [
          [0.75, 2.25],
          [3.75, 5.25],
        ],
        transcribed: [
          [0, 2],
          [4, 5],
        ],
      },
    ]);
    assert.deepEqual(audioTracks(said, 3), [
      { channel: 0, spans: [[0.75, 2.25]], transcribed: [[0, 2]] },
      { channel: 1, spans: [[3.75, 5.25]], transcribed: [[4, 5]] },
      { channel: 2, spans: [], transcribed: [] },
    ]);
  });

  it("the transcript vouches for each word's span, or an utterance's without words", () => {
    const words = [
      { start_at: 100, duration: 200, text: "my" },
      { start_at: 400, duration: 300, text: "[CARD]" },
    ];
    assert.deepEqual(
      transcribedSpans([
        { start_at: 100, duration: 600, msg: "my [CARD]", spk: 0, lang: "en", words },
        { start_at: 2000, duration: 500, msg: "thanks", spk: 1, lang: "en" },
      ]),
      [
        { spk: 0, start_ms: 100, end_ms: 300 },
        { spk: 0, start_ms: 400, end_ms: 700 },
        { spk: 1, start_ms: 2000, end_ms: 2500 },
      ],
    );
  });
});

describe("pii_redaction.audio in the config", () => {
  const parse = (o: object) => parseJobConfig(JSON.stringify({ model_name: "whisper", language: "en", ...o }));
  it("is off unless asked for; silence by default", () => {
    assert.equal(piiAudioMode(parse({})), null);
    assert.equal(piiAudioMode(parse({ use_pii_redaction: true })), null);
    assert.equal(piiAudioMode(parse({ use_pii_redaction: true, pii_redaction: { audio: true } })), "silence");
    assert.equal(
      piiAudioMode(parse({ use_pii_redaction: true, pii_redaction: { audio: true, audio_mode: "beep" } })),
      "beep",
    );
  });
  it("refuses a bad mode, a mode without audio, audio without use_pii_redaction", () => {
    const refused: [object, RegExp][] = [
      [{ use_pii_redaction: true, pii_redaction: { audio: true, audio_mode: "tone" } }, /audio_mode: must be one of/],
      [{ use_pii_redaction: true, pii_redaction: { audio: 1 } }, /config\.pii_redaction\.audio:/],
      [{ use_pii_redaction: true, pii_redaction: { audio_mode: "beep" } }, /needs pii_redaction\.audio true/],
      [{ pii_redaction: { audio: true } }, /needs use_pii_redaction true/],
      [{ use_pii_redaction: false, pii_redaction: { audio: true } }, /needs use_pii_redaction true/],
    ];
    for (const [config, msg] of refused)
      assert.throws(
        () => parse(config),
        (e: unknown) => e instanceof InvalidInput && msg.test(e.message),
        JSON.stringify(config),
      );
  });
});
