// Hypotheses that took a neighbouring utterance's edge words in from the padded audio are refused.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { takesNeighbourWords } from "../../src/refine/neighbours.js";

describe("refinement: a neighbour's words taken in through the padding", () => {
  it("refuses a hypothesis that adds the previous utterance's last word before the text", () => {
    const current = "Quilter is the apostle of the middle classes.";
    assert.equal(takesNeighbourWords(`Mr. ${current}`, current, "Mr.", null), true);
    assert.equal(
      takesNeighbourWords(
        "Zoom, the results for the year 2021.",
        "the results for the year 2021.",
        "… we are on Zoom.",
        null,
      ),
      true,
    );
  });

  it("refuses one that adds the next utterance's first word after the text, in unspaced Japanese too", () => {
    assert.equal(takesNeighbourWords("突然泣き始めた。すっかり", "突然泣き始めた。", null, "すっかり驚いた"), true);
  });

  it("keeps a hypothesis that adds a word no neighbour says, or changes words inside the text", () => {
    assert.equal(takesNeighbourWords("네, 좋아요. 몇 시에", "좋아요. 몇 시에", "식사를 할 때는", null), false);
    assert.equal(takesNeighbourWords("그는 이리저리 피하면서", "끊은 이리저리 피하면서", "그는", "피하면서"), false);
    assert.equal(takesNeighbourWords("Mr. Quilter", "Mr. Quilter", "Mr.", null), false);
  });
});
