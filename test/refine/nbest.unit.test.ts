// N-best rescoring: the combined acoustic + lambda * LM rule, and the LM's mean next-token log-probability.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Token } from "node-llama-cpp";
import { meanNextTokenLogProb } from "../../bench/refine/lmScore.js";
import { combinedScore, DEFAULT_RESCORE, rescoreNBest } from "../../bench/refine/nbest.js";

const o = (lambda: number, margin = 0) => ({ ...DEFAULT_RESCORE, lambda, margin });

describe("N-best rescoring", () => {
  const current = { text: "끊은 이리저리 피하면서 길 한 옆으로 걸어갔다.", acoustic: -0.36, lm: -3.0 };
  const acousticWin = { text: "그는 이리저리 피하면서 길 한 옆으로 걸어갔다.", acoustic: -0.26, lm: -3.4 };

  it("with lambda 0 follows the acoustic score alone; a larger lambda lets the LM overrule it", () => {
    assert.deepEqual(rescoreNBest(current, [acousticWin], o(0)), acousticWin);
    assert.deepEqual(rescoreNBest(current, [acousticWin], o(0.2)), acousticWin); // -0.94 vs -0.96
    assert.equal(rescoreNBest(current, [acousticWin], o(0.5)), null); // -1.96 vs -1.86
  });

  it("a hypothesis must win by more than the margin", () => {
    assert.equal(rescoreNBest(current, [acousticWin], o(0, 0.15)), null);
    assert.deepEqual(rescoreNBest(current, [acousticWin], o(0, 0.05)), acousticWin);
  });

  it("picks the best of several, ignoring identical, truncated, run-on and unscored hypotheses", () => {
    const hyps = [
      { text: current.text, acoustic: 0, lm: 0 },
      { text: "끊은", acoustic: -0.01, lm: -1 },
      { text: `${current.text} ${current.text}`, acoustic: -0.01, lm: -1 },
      { text: "그는 이리저리 피하면서 길 한 옆으로 걸어갔다", acoustic: null, lm: -1 },
      { text: "그는 이리저리 피하면서 길 한옆으로 걸어 갔다.", acoustic: -0.3, lm: null },
      acousticWin,
    ];
    assert.deepEqual(rescoreNBest(current, hyps, o(0.2)), acousticWin);
  });

  it("keeps the current text when it has no score", () => {
    assert.equal(rescoreNBest({ ...current, acoustic: null }, [acousticWin], o(0)), null);
    assert.equal(rescoreNBest({ ...current, lm: null }, [acousticWin], o(0.3)), null);
    assert.equal(combinedScore({ ...current, lm: null }, 0), current.acoustic);
  });
});

describe("LM mean next-token log-probability", () => {
  const t = (...xs: number[]) => xs as Token[];
  it("reads each token's probability from the list of the position before it", () => {
    const lists = [new Map([[t(2)[0]!, 0.5]]), new Map([[t(3)[0]!, 0.25]]), undefined];
    assert.equal(meanNextTokenLogProb(t(1, 2, 3), lists), (Math.log(0.5) + Math.log(0.25)) / 2);
  });
  it("counts a token outside the top-k list as the smallest probability listed", () => {
    const list = new Map<Token, number>([
      [t(7)[0]!, 0.6],
      [t(8)[0]!, 0.1],
    ]);
    assert.equal(meanNextTokenLogProb(t(1, 9), [list]), Math.log(0.1));
  });
  it("is null with nothing to score", () => {
    assert.equal(meanNextTokenLogProb(t(1), []), null);
    assert.equal(meanNextTokenLogProb(t(1, 2), [undefined]), null);
  });
});
