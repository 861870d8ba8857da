// Speaker turns + recognized segments → segments with a speaker, split at speaker changes, spk 0..N-1 by first
// appearance; and the utterances the pipeline builds from them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  assignSpeakers,
  renumber,
  type SpeakerTurn,
  speakerAt,
  speakerUtterances,
  wordRuns,
} from "../../src/diarization/index.js";
import type { EngineSegment, EngineWord } from "../../src/engine/protocol.js";

const word = (start: number, end: number, text: string): EngineWord => ({ start, end, text, probability: 0.9 });
const seg = (words: EngineWord[], language = "ko"): EngineSegment => ({
  start: words[0]!.start,
  end: words[words.length - 1]!.end,
  text: words
    .map((w) => w.text)
    .join("")
    .trim(),
  language,
  avg_logprob: -0.2,
  no_speech_prob: 0.01,
  words,
});
const turn = (start: number, end: number, speaker: number): SpeakerTurn => ({ start, end, speaker });

describe("speakerAt", () => {
  const turns = [turn(0, 2, 0), turn(2.5, 5, 1)];
  it("takes the turn that overlaps the span most", () => {
    assert.equal(speakerAt(turns, 1.5, 2.2), 0);
    assert.equal(speakerAt(turns, 1.9, 3.0), 1);
  });
  it("takes the nearest turn when none overlaps", () => {
    assert.equal(speakerAt(turns, 2.05, 2.15), 0);
    assert.equal(speakerAt(turns, 2.35, 2.45), 1);
    assert.equal(speakerAt(turns, 9, 10), 1);
  });
  it("is null without turns", () => {
    assert.equal(speakerAt([], 0, 1), null);
  });
});

describe("wordRuns", () => {
  const w = (i: number) => word(i * 0.5, i * 0.5 + 0.4, ` w${i}`);
  it("groups consecutive words of one speaker", () => {
    const runs = wordRuns([w(0), w(1), w(2), w(3)], [0, 0, 1, 1]);
    assert.deepEqual(
      runs.map((r) => [r.spk, r.words.length]),
      [
        [0, 2],
        [1, 2],
      ],
    );
  });
  it("folds a short run between two runs of one other speaker (boundary jitter)", () => {
    const blip = word(1.0, 1.2, " x");
    const runs = wordRuns([w(0), w(1), blip, w(3), w(4)], [0, 0, 1, 0, 0]);
    assert.deepEqual(
      runs.map((r) => [r.spk, r.words.length]),
      [[0, 5]],
    );
  });
  it("keeps a short run that is a real change of speaker at both sides", () => {
    const runs = wordRuns([w(0), w(1), word(1.0, 1.2, " x"), w(3), w(4)], [0, 0, 1, 2, 2]);
    assert.equal(runs.length, 3);
  });
});

describe("assignSpeakers", () => {
  it("splits a segment where its words change speaker, keeping the words' own text", () => {
    const s = seg([
      word(0, 0.5, " 안녕하세요"),
      word(0.6, 1.0, " 네"),
      word(1.5, 2.0, " 반갑습니다"),
      word(2.1, 2.6, " 저도요"),
    ]);
    const out = assignSpeakers([s], [turn(0, 1.1, 0), turn(1.4, 3, 1)]);
    assert.deepEqual(
      out.map((o) => [o.spk, o.text, o.start, o.end]),
      [
        [0, "안녕하세요 네", 0, 1.0],
        [1, "반갑습니다 저도요", 1.5, 2.6],
      ],
    );
    assert.equal(out[0]!.words!.length, 2);
  });

  it("renumbers speakers by first appearance", () => {
    const a = seg([word(0, 1, " a")]);
    const b = seg([word(2, 3, " b")]);
    const c = seg([word(4, 5, " c")]);
    const out = assignSpeakers([a, b, c], [turn(0, 1.2, 5), turn(1.8, 3.2, 2), turn(3.8, 5.5, 5)]);
    assert.deepEqual(
      out.map((o) => o.spk),
      [0, 1, 0],
    );
  });

  it("gives every segment speaker 0 when there are no turns", () => {
    const out = assignSpeakers([seg([word(0, 1, " a")]), seg([word(2, 3, " b")])], []);
    assert.deepEqual(
      out.map((o) => o.spk),
      [0, 0],
    );
  });

  it("uses the segment span when the segment has no words", () => {
    const s: EngineSegment = { start: 3, end: 4, text: "x", language: "ko", avg_logprob: 0, no_speech_prob: 0 };
    assert.equal(assignSpeakers([s], [turn(0, 2, 0), turn(2.9, 5, 1)])[0]!.spk, 0); // renumbered: first seen
  });

  it("survives overlapping and unsorted turns", () => {
    const out = assignSpeakers([seg([word(0, 1, " a"), word(1.2, 2, " b")])], [turn(1, 3, 1), turn(0, 1.5, 0)]);
    assert.ok(out.length >= 1 && out.every((o) => o.spk === 0 || o.spk === 1));
  });
});

describe("renumber", () => {
  it("maps ids to 0..N-1 in order of start time", () => {
    const items = [
      { start: 5, spk: 3 },
      { start: 1, spk: 7 },
      { start: 3, spk: 3 },
    ];
    assert.deepEqual(
      renumber(items).map((i) => i.spk),
      [1, 0, 1],
    );
  });
});

describe("speakerUtterances", () => {
  it("builds ms utterances per speaker piece, words only when asked for", () => {
    const s = seg([word(0, 0.5, " one"), word(0.6, 1.0, " two"), word(1.5, 2.0, " three")], "en");
    const turns = [turn(0, 1.1, 0), turn(1.3, 2.5, 1)];
    const plain = speakerUtterances([s], turns, { wordTimestamps: false });
    assert.deepEqual(plain, [
      { start_at: 0, duration: 1000, msg: "one two", spk: 0, lang: "en" },
      { start_at: 1500, duration: 500, msg: "three", spk: 1, lang: "en" },
    ]);
    const withWords = speakerUtterances([s], turns, { wordTimestamps: true });
    assert.deepEqual(withWords[1]!.words, [{ start_at: 1500, duration: 500, text: "three" }]);
  });

  it("keeps both speakers' words where their turns overlap (the engine's overlapped speech)", () => {
    // A talks 0-6 s, B 4-10 s (both at once 4-6 s); the recognizer returns words from both
    const words = [
      word(0.5, 1.5, " a1"),
      word(2, 3, " a2"),
      word(4.2, 4.8, " a3"),
      word(5.0, 5.6, " b1"),
      word(7, 8, " b2"),
      word(8.5, 9.5, " b3"),
    ];
    const turns = [turn(0, 6, 0), turn(4, 10, 1)];
    const out = speakerUtterances([seg(words, "en")], turns, { wordTimestamps: true });
    assert.deepEqual(
      out.flatMap((u) => u.words!.map((w) => w.text)),
      ["a1", "a2", "a3", "b1", "b2", "b3"],
    );
    assert.deepEqual(new Set(out.map((u) => u.spk)), new Set([0, 1])); // both speakers present
    assert.equal(out[0]!.spk, 0); // A's solo words are A's
    assert.equal(out[out.length - 1]!.spk, 1); // B's solo words are B's
  });
});
