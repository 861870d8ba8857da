// The rule that decides whether a re-decoded hypothesis replaces an utterance's text.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_SELECT, selectHypothesis } from "../../src/refine/select.js";

describe("refinement hypothesis selection", () => {
  it("keeps the current text unless a hypothesis scores better by the margin", () => {
    const current = "다섯 권까지 빌릴 수 있고";
    assert.equal(
      selectHypothesis(current, -0.5, [
        { text: "다섯 권까지 빌릴 수 있구", score: -0.5 + DEFAULT_SELECT.margin, votes: 2 },
      ]),
      null,
    );
    const better = { text: "다섯 권까지 빌릴 수 있고요", score: -0.2, votes: 2 };
    assert.deepEqual(
      selectHypothesis(current, -0.5, [{ text: "다섯 건까지 빌릴 수 있고", score: -0.3, votes: 2 }, better]),
      better,
    );
  });

  it("ignores unscored, empty, identical, truncated and run-on hypotheses", () => {
    const current = "어른 두 명과 아이 한 명입니다";
    const hyps = [
      { text: "어른 두 명과 아이 한 명입니다", score: 0, votes: 2 },
      { text: "어른", score: -0.01, votes: 2 },
      { text: "어른 두 명과 아이 한 명입니다 어른 두 명과 아이 한 명입니다", score: -0.01, votes: 2 },
      { text: "   ", score: -0.01, votes: 2 },
      { text: "어른 두명과 아이 한명 입니다", score: null, votes: 2 },
    ];
    assert.equal(selectHypothesis(current, -1, hyps), null);
  });

  it("needs as many agreeing decodes as minVotes, capped by the decodes that ran", () => {
    const lone = { text: "다섯 권까지 빌릴 수 있고요", score: -0.1, votes: 1 };
    const two = { ...DEFAULT_SELECT, minVotes: 2 };
    assert.equal(selectHypothesis("다섯 권까지 빌릴 수 있고", -0.5, [lone], two, 2), null);
    assert.deepEqual(selectHypothesis("다섯 권까지 빌릴 수 있고", -0.5, [lone], two, 1), lone);
    assert.deepEqual(
      selectHypothesis("다섯 권까지 빌릴 수 있고", -0.5, [lone], { ...DEFAULT_SELECT, minVotes: 1 }, 2),
      lone,
    );
  });

  it("with no score for the current text, takes the best scored hypothesis", () => {
    assert.equal(
      selectHypothesis("abc def", null, [
        { text: "abc deg", score: -0.4, votes: 2 },
        { text: "abc dez", score: -0.3, votes: 2 },
      ])?.text,
      "abc dez",
    );
  });
});
