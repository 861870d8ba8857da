// applyRefinement: which of the engine's hypotheses may replace an utterance, given the job's text options.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { applyRefinement } from "../../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../../src/refine/select.js";

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
    const out = applyRefinement([utterance], result, config, DEFAULT_SELECT, 1);
    assert.equal(out.changed, 0);
    assert.equal(out.utterances[0]!.msg, utterance.msg);
  });

  it("compares it when the job keeps fillers (its current text has them too)", () => {
    const config = parseJobConfig(
      JSON.stringify({ model_name: "whisper", language: "en", use_disfluency_filter: false }),
    );
    const out = applyRefinement([utterance], result, config, DEFAULT_SELECT, 1);
    assert.equal(out.changed, 1);
    assert.match(out.utterances[0]!.msg, /we hope that um, next year/);
  });
});
