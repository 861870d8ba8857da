// Known speakers' pure parts (src/speakers): the matching rule (threshold, margin, least speech, one name per
// cluster and one cluster per name), the speech a diarized speaker's voiceprint is made from, merged voiceprints,
// and the names in the exports.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderExport } from "../../src/export/formats.js";
import {
  channelSpans,
  diarizedSpans,
  matchSpeakers,
  mergePrints,
  nameUtterances,
  SPEAKER_OPTIONS,
  subtract,
} from "../../src/speakers/index.js";

const unit = (v: number[]): number[] => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const kim = { id: "k", name: "Kim", embedding: unit([1, 0, 0]) };
const lee = { id: "l", name: "Lee", embedding: unit([0, 1, 0]) };
const opts = {
  threshold: 0.5,
  margin: 0.05,
  minSpeechS: 3,
  keepThreshold: 0.4,
  phoneThreshold: 0.6,
  phoneKeepThreshold: 0.6,
};

describe("matchSpeakers", () => {
  it("names each cluster after its best enrolled voice above the threshold, and leaves the rest anonymous", () => {
    const clusters = [
      { key: 0, embedding: unit([0.9, 0.1, 0.1]), speechS: 10 },
      { key: 1, embedding: unit([0.1, 0.9, 0.1]), speechS: 10 },
      { key: 2, embedding: unit([0.1, 0.1, 0.9]), speechS: 10 }, // nobody enrolled
    ];
    const m = matchSpeakers(clusters, [kim, lee], opts);
    assert.deepEqual(
      m.map((x) => [x.key, x.name]),
      [
        [0, "Kim"],
        [1, "Lee"],
      ],
    );
  });

  it("never gives one name to two clusters: the better score takes it", () => {
    const clusters = [
      { key: 0, embedding: unit([0.8, 0.2, 0.3]), speechS: 10 },
      { key: 1, embedding: unit([0.95, 0.1, 0.1]), speechS: 10 },
    ];
    const m = matchSpeakers(clusters, [kim, lee], opts);
    assert.deepEqual(
      m.map((x) => [x.key, x.name]),
      [[1, "Kim"]],
    );
  });

  it("refuses a cluster with too little speech, or one two voices fit almost equally", () => {
    const short = [{ key: 0, embedding: kim.embedding, speechS: 2 }];
    assert.deepEqual(matchSpeakers(short, [kim], opts), []);
    const between = [{ key: 0, embedding: unit([1, 0.98, 0]), speechS: 10 }];
    assert.deepEqual(matchSpeakers(between, [kim, lee], opts), []);
    assert.deepEqual(matchSpeakers([{ key: 0, embedding: null, speechS: 10 }], [kim], opts), []);
  });

  it("compares a voice heard on the phone with the phone prints, by the phone thresholds", () => {
    const kimPhone = { ...kim, embeddingPhone: unit([0, 0, 1]) };
    const onPhone = (x: number[]) => [{ key: 0, embedding: unit(x), speechS: 10, narrowband: true }];
    // near Kim's phone print: named on the phone, not when the same print is taken as wideband
    assert.deepEqual(
      matchSpeakers(onPhone([0.1, 0, 0.9]), [kimPhone, lee], opts).map((x) => x.name),
      ["Kim"],
    );
    assert.deepEqual(matchSpeakers([{ ...onPhone([0.1, 0, 0.9])[0]!, narrowband: false }], [kimPhone, lee], opts), []);
    // the phone threshold (0.6 here) holds: a cosine of 0.55 with the phone print names no one
    assert.deepEqual(matchSpeakers(onPhone([0.835, 0, 0.55]), [kimPhone], opts), []);
    // a voice enrolled before phone prints: its wideband print, by the wideband threshold
    assert.deepEqual(
      matchSpeakers(onPhone([0.9, 0.1, 0.1]), [kim], opts).map((x) => x.name),
      ["Kim"],
    );
  });

  it("the shipped operating point is a threshold with a margin", () => {
    assert.ok(SPEAKER_OPTIONS.threshold > 0 && SPEAKER_OPTIONS.threshold < 1);
    assert.ok(SPEAKER_OPTIONS.minEnrollS === 5 && SPEAKER_OPTIONS.maxEnrollS === 300);
    assert.ok(SPEAKER_OPTIONS.threshold >= 0.5, "no false accept was measured at 0.5 and above (docs/speakers.md)");
  });
});

describe("nameUtterances", () => {
  const rule = { ...opts, utteranceMinS: 1.5, keepThreshold: 0.4, clusterAgreement: 0.8, shortVeto: 0.35 };
  const clusters = [
    { key: 0, embedding: unit([0.9, 0.1, 0.1]), speechS: 20 }, // Kim's cluster
    { key: 1, embedding: unit([0.1, 0.1, 0.9]), speechS: 10 }, // nobody enrolled
  ];
  const names = (us: { cluster: number; embedding: number[] | null; speechS: number }[]) =>
    nameUtterances(clusters, us, [kim, lee], rule).map((e) => e?.name ?? null);

  it("names an utterance after its cluster's voice when its own audio agrees", () => {
    assert.deepEqual(
      names([
        { cluster: 0, embedding: unit([0.7, 0.3, 0.4]), speechS: 3 }, // 0.81 for Kim: kept
        { cluster: 0, embedding: null, speechS: 0.8 }, // too short to check: the cluster agrees, so Kim
        { cluster: 1, embedding: unit([0.1, 0.1, 0.9]), speechS: 5 },
      ]),
      ["Kim", "Kim", null],
    );
  });

  it("never lends the cluster's name to a merged stranger, and takes another voice only by the full rule", () => {
    assert.deepEqual(
      names([
        { cluster: 0, embedding: unit([0.95, 0.05, 0.1]), speechS: 4 }, // Kim
        { cluster: 0, embedding: unit([0.2, 0.1, 0.95]), speechS: 4 }, // a stranger merged into Kim's cluster
        { cluster: 0, embedding: unit([0.1, 0.95, 0.1]), speechS: 4 }, // Lee, merged too: her own voice passes
      ]),
      ["Kim", null, "Lee"],
    );
  });

  it("an utterance does not take by its own audio a name another cluster holds", () => {
    // cluster 1 (nobody enrolled) holds an utterance close enough to Kim to pass alone (0.78), but Kim's name is
    // cluster 0's: a similar voice, or Kim split by diarization; it stays anonymous as its cluster does
    assert.deepEqual(
      names([
        { cluster: 0, embedding: unit([0.95, 0.05, 0.1]), speechS: 4 },
        { cluster: 1, embedding: unit([0.75, 0.1, 0.6]), speechS: 4 },
      ]),
      ["Kim", null],
    );
  });

  it("short utterances of a cluster whose checked speech disagrees stay unnamed", () => {
    assert.deepEqual(
      names([
        { cluster: 0, embedding: unit([0.95, 0.05, 0.1]), speechS: 3 },
        { cluster: 0, embedding: unit([0.2, 0.1, 0.95]), speechS: 5 }, // most of the cluster is someone else
        { cluster: 0, embedding: null, speechS: 1 },
      ]),
      ["Kim", null, null],
    );
  });

  it("a short utterance whose own voice is far from its cluster's name does not take it", () => {
    assert.deepEqual(
      names([
        { cluster: 0, embedding: unit([0.95, 0.05, 0.1]), speechS: 8 }, // the cluster agrees: Kim
        { cluster: 0, embedding: unit([0.5, 0.2, 0.85]), speechS: 1 }, // 0.5 for Kim: too short to check, kept
        { cluster: 0, embedding: unit([0.2, 0.1, 0.95]), speechS: 1 }, // 0.2 for Kim: someone else
      ]),
      ["Kim", "Kim", null],
    );
  });
});

describe("the speech of each speaker", () => {
  it("subtract removes every covered stretch", () => {
    assert.deepEqual(
      subtract(
        [
          [0, 10],
          [20, 30],
        ],
        [
          [2, 3],
          [9, 21],
          [25, 40],
        ],
      ),
      [
        [0, 2],
        [3, 9],
        [21, 25],
      ],
    );
  });

  it("a diarized speaker's spans are its turns without overlapped speech, found through the renumbered spk", () => {
    const turns = [
      { start: 0, end: 4, speaker: 0 },
      { start: 3, end: 8, speaker: 1 },
      { start: 8, end: 12, speaker: 0 },
    ];
    // The utterances' spk numbering differs from the engine's (speaker 1 is spk 0 here).
    const utterances = [
      { start_at: 3500, duration: 4000, msg: "b", spk: 0, lang: "ko" },
      { start_at: 0, duration: 3000, msg: "a", spk: 1, lang: "ko" },
      { start_at: 8500, duration: 3000, msg: "a", spk: 1, lang: "ko" },
    ];
    const spans = diarizedSpans(utterances, turns);
    assert.deepEqual(spans.get(0), [[4, 8]]);
    assert.deepEqual(spans.get(1), [
      [0, 3],
      [8, 12],
    ]);
  });

  it("a channel's spans are its utterances'", () => {
    const spans = channelSpans([
      { start_at: 0, duration: 1500, msg: "a", spk: 1, lang: "ko" },
      { start_at: 2000, duration: 500, msg: "b", spk: 0, lang: "ko" },
    ]);
    assert.deepEqual(spans.get(1), [[0, 1.5]]);
    assert.deepEqual(spans.get(0), [[2, 2.5]]);
  });
});

describe("voiceprints and exports", () => {
  it("added audio moves the voiceprint by its share of speech, and never mixes models", () => {
    const a = { model: "m", embedding: [1, 0], embeddingPhone: [0, 1], speechS: 30 };
    const b = { model: "m", embedding: [0, 1], embeddingPhone: [1, 0], speechS: 10 };
    const m = mergePrints(a, b);
    assert.equal(m.speechS, 40);
    assert.ok(Math.abs(Math.hypot(...m.embedding) - 1) < 1e-9);
    assert.ok(Math.abs(m.embedding[1]! / m.embedding[0]! - 1 / 3) < 1e-9);
    const [p0, p1] = m.embeddingPhone ?? [];
    assert.ok(Math.abs(p0! / p1! - 1 / 3) < 1e-9);
    // a speaker enrolled before phone prints keeps none: a print of the added speech alone is not the voice's
    assert.equal(mergePrints({ ...a, embeddingPhone: null }, b).embeddingPhone, null);
    assert.throws(() => mergePrints(a, { ...b, model: "other" }));
  });

  it("SRT, WebVTT and text label a named speaker by name and the others by number", () => {
    const utterances = [
      { start_at: 0, duration: 2000, msg: "안녕하세요.", spk: 0, spk_name: "Kim <CEO>" },
      { start_at: 2500, duration: 2000, msg: "네.", spk: 1 },
    ];
    const srt = renderExport("srt", utterances, { speakers: "speaker" });
    assert.match(srt, /\[Kim <CEO>\] 안녕하세요\./);
    assert.match(srt, /\[Speaker 1\] 네\./);
    const vtt = renderExport("vtt", utterances, { speakers: "speaker" });
    assert.match(vtt, /<v Kim &lt;CEO&gt;>안녕하세요\./);
    assert.match(vtt, /<v Speaker 1>네\./);
    assert.match(
      renderExport("txt", utterances, { speakers: "speaker" }),
      /^Kim <CEO>: 안녕하세요\.\n\nSpeaker 1: 네\.\n$/,
    );
  });
});
