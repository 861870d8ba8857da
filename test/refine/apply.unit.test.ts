// applyRefinement: which of the engine's hypotheses may replace an utterance, given the job's text options.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { applyRefinement, DEFAULT_RULE } from "../../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../../src/refine/select.js";

// The earlier rule (the best-scoring hypothesis), which these cases were found with.
const SCORE_RULE = { languages: null, agree: null, select: DEFAULT_SELECT };
const utterance: Utterance = {
  start_at: 0,
  duration: 4900,
  msg: "last year we were already on zoom and I hope that next year",
  spk: 0,
  lang: "en",
};
// Scores as the engine gave them on the mu-law copy of en/earnings22_1 (bench/refine/changes.ts at fdf3214).
const withFillers = {
  text: "Um, last year we were already on zoom and we hope that um, next year.",
  score: -1.61,
  votes: 1,
};
const result = { spans: [{ current_score: -1.89, hypotheses: [withFillers] }] };

describe("refinement with the job's text options", () => {
  it("does not compare a hypothesis that spells out fillers the job's filter removes", () => {
    const config = parseJobConfig(JSON.stringify({ model_name: "whisper", language: "en" }));
    assert.equal(config.use_disfluency_filter, true);
    const out = applyRefinement([utterance], result, config, SCORE_RULE, 1);
    assert.equal(out.changed, 0);
    assert.equal(out.utterances[0]!.msg, utterance.msg);
  });

  it("compares it when the job keeps fillers (its current text has them too)", () => {
    const config = parseJobConfig(
      JSON.stringify({ model_name: "whisper", language: "en", use_disfluency_filter: false }),
    );
    const out = applyRefinement([utterance], result, config, SCORE_RULE, 1);
    assert.equal(out.changed, 1);
    assert.match(out.utterances[0]!.msg, /we hope that um, next year/);
  });
});

describe("the agreement rule (the default's, enabled for ko)", () => {
  const RULE_KO = { ...DEFAULT_RULE, languages: ["ko"] };
  const ko: Utterance = {
    start_at: 0,
    duration: 3000,
    msg: "식사를 할 때는 얼음보다 먼저 먹으면 안 돼요.",
    spk: 0,
    lang: "ko",
  };
  const fixed = "식사를 할 때는 어른보다 먼저 먹으면 안 돼요.";
  const span = (texts: string[], score = -0.3) => ({
    current_score: -0.5,
    hypotheses: [...new Set(texts)].map((text) => ({ text, score, votes: texts.filter((t) => t === text).length })),
    decoded: texts.map((t) => [t]),
  });
  const config = parseJobConfig(JSON.stringify({ language: "ko" }));

  it("changes a short edit two of the three decodes write, and not one that only one writes", () => {
    const all = applyRefinement([ko], { spans: [span([fixed, fixed, fixed])] }, config, RULE_KO, 3);
    assert.equal(all.utterances[0]!.msg, fixed);
    assert.equal(all.changed, 1);
    const two = applyRefinement([ko], { spans: [span([fixed, fixed, ko.msg])] }, config, RULE_KO, 3);
    assert.equal(two.utterances[0]!.msg, fixed);
    const one = applyRefinement([ko], { spans: [span([fixed, ko.msg, ko.msg])] }, config, RULE_KO, 3);
    assert.equal(one.utterances[0]!.msg, ko.msg);
  });

  it("keeps the base text where the decodes agree but do not score clearly above it", () => {
    const out = applyRefinement([ko], { spans: [span([fixed, fixed, fixed], -0.47)] }, config, RULE_KO, 3);
    assert.equal(out.changed, 0);
  });

  it("keeps a number, and a rewrite of more than two letters, even when every decode writes it", () => {
    const said = { ...ko, msg: "5건까지 빌릴 수 있고 기간이 20일입니다." };
    const number = "5건까지 빌릴 수 있고 기간이 10일입니다.";
    const phrase = "5건까지 빌릴 수 있고 기가능력이 20일입니다.";
    for (const t of [number, phrase]) {
      const out = applyRefinement([said], { spans: [span([t, t, t])] }, config, RULE_KO, 3);
      assert.equal(out.utterances[0]!.msg, said.msg, t);
    }
  });

  it("keeps the base text of a language it may not change, and the default changes none", () => {
    const en = { ...ko, lang: "en" };
    const out = applyRefinement([en], { spans: [span([fixed, fixed, fixed])] }, config, RULE_KO, 3);
    assert.equal(out.changed, 0);
    assert.deepEqual(out.utterances[0], en);
    const none = applyRefinement([ko], { spans: [span([fixed, fixed, fixed])] }, config, DEFAULT_RULE, 3);
    assert.deepEqual(none.utterances[0], ko);
  });

  it("does not run the job's text options twice over an agreed text (ITN would rewrite its numbers)", () => {
    const ja: Utterance = {
      start_at: 0,
      duration: 5000,
      msg: "1回の費用がおよそ1001億円と高額です。",
      spk: 0,
      lang: "ja",
    };
    const edited = "1回の費用がおよそ1001億円と高額でした。";
    const jaConfig = parseJobConfig(JSON.stringify({ language: "ja" }));
    const rule = { ...DEFAULT_RULE, languages: ["ja"] };
    const out = applyRefinement([ja], { spans: [span([edited, edited, ja.msg])] }, jaConfig, rule, 3);
    assert.equal(out.utterances[0]!.msg, edited);
  });
});
