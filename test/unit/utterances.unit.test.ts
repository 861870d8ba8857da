// Engine segments (float seconds) → API utterances (integer ms), with word timestamps clipped into their utterance.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WHISPER_LANGUAGES } from "../../src/domain/languages.js";
import type { EngineSegment, EngineWord } from "../../src/engine/protocol.js";
import { toUtterances } from "../../src/engine/utterances.js";

const seg = (start: number, end: number, text: string, language = "ko", words?: EngineWord[]): EngineSegment => ({
  start,
  end,
  text,
  language,
  avg_logprob: -0.2,
  no_speech_prob: 0.01,
  ...(words ? { words } : {}),
});
const word = (start: number, end: number, text: string): EngineWord => ({ start, end, text, probability: 0.9 });

describe("toUtterances", () => {
  it("converts seconds to integer milliseconds (rounded) and trims the text", () => {
    const [u] = toUtterances([seg(1.2344, 3.0006, "  안녕하세요 ")], { wordTimestamps: false });
    assert.deepEqual(u, { start_at: 1234, duration: 1767, msg: "안녕하세요", spk: 0, lang: "ko" });
    assert.ok(Number.isInteger(u!.start_at) && Number.isInteger(u!.duration));
  });

  it("every field is an integer ms value for awkward floats", () => {
    const segments = [seg(0.1 + 0.2, 0.7 * 3, "a"), seg(1 / 3, 2 / 3, "b"), seg(12345.6789, 12346.0001, "c")];
    for (const u of toUtterances(segments, { wordTimestamps: false })) {
      assert.ok(Number.isInteger(u.start_at), String(u.start_at));
      assert.ok(Number.isInteger(u.duration), String(u.duration));
      assert.ok(u.duration >= 0);
    }
  });

  it("clamps negative times to 0 and an end before the start to a zero duration", () => {
    const [a, b] = toUtterances([seg(-0.5, 0.25, "a"), seg(2, 1.5, "b")], { wordTimestamps: false });
    assert.deepEqual([a!.start_at, a!.duration], [0, 250]);
    assert.deepEqual([b!.start_at, b!.duration], [2000, 0]);
  });

  it("drops segments whose text is empty or blank", () => {
    const out = toUtterances([seg(0, 1, ""), seg(1, 2, "   \n"), seg(2, 3, "ok")], { wordTimestamps: false });
    assert.deepEqual(
      out.map((u) => u.msg),
      ["ok"],
    );
  });

  it("orders utterances by start time", () => {
    const out = toUtterances([seg(5, 6, "c"), seg(0, 1, "a"), seg(2, 3, "b")], { wordTimestamps: false });
    assert.deepEqual(
      out.map((u) => u.msg),
      ["a", "b", "c"],
    );
  });

  it("uses spk 0 by default and the given speaker or channel id otherwise", () => {
    assert.equal(toUtterances([seg(0, 1, "a")], { wordTimestamps: false })[0]!.spk, 0);
    assert.equal(toUtterances([seg(0, 1, "a")], { wordTimestamps: false, spk: 1 })[0]!.spk, 1);
  });

  it("lang is an ISO 639-1 code: Whisper's own tokens are translated", () => {
    const out = toUtterances(
      [seg(0, 1, "a", "jw"), seg(1, 2, "b", "yue"), seg(2, 3, "c", "ja"), seg(3, 4, "d", "en")],
      {
        wordTimestamps: false,
      },
    );
    assert.deepEqual(
      out.map((u) => u.lang),
      ["jv", "zh", "ja", "en"],
    );
    for (const u of out) {
      assert.match(u.lang, /^[a-z]{2}$/);
      assert.ok(WHISPER_LANGUAGES.has(u.lang), u.lang);
    }
  });

  it("has no words field unless word timestamps were asked for", () => {
    const [u] = toUtterances([seg(0, 1, "a b", "ko", [word(0, 0.5, "a"), word(0.5, 1, "b")])], {
      wordTimestamps: false,
    });
    assert.equal("words" in u!, false);
  });

  it("gives an empty words list when asked for but the engine sent none", () => {
    const [u] = toUtterances([seg(0, 1, "a")], { wordTimestamps: true });
    assert.deepEqual(u!.words, []);
  });

  it("converts words to integer ms and keeps each word inside its utterance", () => {
    const [u] = toUtterances(
      [
        seg(1.0, 2.0, "one two three four", "ko", [
          word(0.8, 1.2, " one"), // starts before the utterance
          word(1.2004, 1.5006, "two"),
          word(1.6, 2.4, "three"), // ends after it
          word(2.1, 2.3, "four"), // wholly after it
          word(1.7, 1.8, "  "), // blank: dropped
          word(1.9, 1.85, "back"), // end before start
        ]),
      ],
      { wordTimestamps: true },
    );
    assert.ok(u);
    assert.deepEqual(u.words, [
      { start_at: 1000, duration: 200, text: "one" },
      { start_at: 1200, duration: 301, text: "two" },
      { start_at: 1600, duration: 400, text: "three" },
      { start_at: 2000, duration: 0, text: "four" },
      { start_at: 1900, duration: 0, text: "back" },
    ]);
    const end = u.start_at + u.duration;
    for (const w of u.words ?? []) {
      assert.ok(Number.isInteger(w.start_at) && Number.isInteger(w.duration));
      assert.ok(w.start_at >= u.start_at && w.start_at + w.duration <= end, JSON.stringify(w));
    }
  });

  it("returns [] for no segments", () => {
    assert.deepEqual(toUtterances([], { wordTimestamps: true }), []);
  });
});
