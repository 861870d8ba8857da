// agreedText: an utterance changes only where independent decodes of its audio write the same edit.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type AgreementOptions, agreedText, type Vote } from "../../src/refine/agree.js";

const ALL: AgreementOptions = { minVotes: 3, protectedVotes: 3, margin: null, maxEditLetters: null };
const TWO: AgreementOptions = { ...ALL, minVotes: 2 };
const votes = (...texts: string[]): Vote[] => texts.map((text) => ({ text, score: -0.3 }));

describe("refinement by agreement of decodes", () => {
  const said = "5건까지 빌릴 수 있고 기간이 20일입니다.";
  it("keeps a number that not every decode changes (issue 48: 20일 → 11)", () => {
    const wrong = "5건까지 빌릴 수 있고 기가능이 11입니다.";
    assert.equal(agreedText(said, -0.4, votes(wrong, said, said), [], ALL), null);
    assert.equal(agreedText(said, -0.4, votes(wrong, wrong, said), [], TWO), null, "a number needs every decode");
    assert.equal(
      agreedText(said, -0.4, votes(wrong, wrong, wrong), [], TWO),
      "5건까지 빌릴 수 있고 기가능이 11입니다.",
      "every decode agreeing is the strong agreement a number needs",
    );
  });

  it("makes an edit every decode writes, with the decodes' own spacing around it", () => {
    const current = "식사를 할 때는 얼음보다 먼저 먹으면 안 돼요.";
    const fixed = "식사를 할 때는 어른보다 먼저 먹으면 안 돼요.";
    assert.equal(agreedText(current, -0.5, votes(fixed, fixed, fixed), [], ALL), fixed);
    assert.equal(agreedText(current, -0.5, votes(fixed, fixed, current), [], ALL), null, "two of three");
    assert.equal(agreedText(current, -0.5, votes(fixed, fixed, current), [], TWO), fixed);
  });

  it("counts spacing and punctuation as no change", () => {
    const current = "네 좋아요 몇 시에 어디로 가면 돼요";
    const respaced = "네, 좋아요. 몇시에 어디로 가면 돼요?";
    assert.equal(agreedText(current, -0.5, votes(respaced, respaced, respaced), [], ALL), null);
  });

  it("inserts a word all decodes add, as a word", () => {
    const current = "마침 빈방이 있습니다.";
    const added = "네, 마침 빈방이 있습니다.";
    assert.equal(agreedText(current, -0.5, votes(added, added, added), [], ALL), "네, 마침 빈방이 있습니다.");
  });

  it("changes a keyword of the client's only when every decode does", () => {
    const current = "다음에 삼계탕 한번 먹으러 가야겠어요.";
    const other = "다음에 삼겹살 한번 먹으러 가야겠어요.";
    assert.equal(agreedText(current, -0.5, votes(other, other, current), ["삼계탕"], TWO), null);
    assert.equal(agreedText(current, -0.5, votes(other, other, current), [], TWO), other);
  });

  it("lets the score veto an agreed edit, never make one", () => {
    const current = "식사를 할 때는 얼음보다 먼저 먹으면 안 돼요.";
    const fixed = "식사를 할 때는 어른보다 먼저 먹으면 안 돼요.";
    const scored = (s: number[]): Vote[] => s.map((score) => ({ text: fixed, score }));
    const veto = { ...ALL, margin: 0 };
    assert.equal(agreedText(current, -0.5, scored([-0.3, -0.4, -0.6]), [], veto), null, "one decode scores worse");
    assert.equal(agreedText(current, -0.5, scored([-0.3, -0.4, -0.45]), [], veto), fixed);
    assert.equal(agreedText(current, null, scored([-0.3, -0.4, -0.45]), [], veto), null, "no score, no change");
  });

  it("works on unspaced Japanese", () => {
    const current = "すると、プランコノリは突然泣き始めた。";
    const fixed = "すると、ブランコ乗りは突然泣き始めた。";
    assert.equal(agreedText(current, -0.5, votes(fixed, fixed, fixed), [], ALL), fixed);
  });

  it("keeps separate edits apart, making only the agreed one", () => {
    const current = "그는 이리저리 피하면서 길 한 옆으로 걸어갔다";
    const a = "그는 이리저리 피하면서 길 한 옆으로 걸어갔다"; // no change
    const b = "끊은 이리저리 피하면서 길 한 옆으로 걸었다"; // two edits
    const c = "그는 이리저리 피하면서 길 한 옆으로 걸었다"; // the second edit only
    assert.equal(agreedText(current, -0.5, votes(a, b, c), [], ALL), null);
    assert.equal(
      agreedText(current, -0.5, votes(a, b, c), [], TWO),
      "그는 이리저리 피하면서 길 한 옆으로 걸었다",
      "걸었다 has two votes of three, 끊은 one",
    );
    assert.equal(agreedText(current, -0.5, votes(b, b, c), [], TWO), "끊은 이리저리 피하면서 길 한 옆으로 걸었다");
  });
});
