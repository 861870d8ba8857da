// Keyword post-correction: near misses become the keyword; ordinary words and exact hits stay.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runOnString } from "../../src/text/edits.js";
import { keywordDistance, keywordEdits } from "../../src/text/keywords.js";

const correct = (lang: string, keywords: string[]) => (s: string) =>
  runOnString(s, (t) => keywordEdits(t, lang, keywords));

const CORRECTED: [string, string[], string, string][] = [
  ["ko", ["삼계탕"], "다음에 삼게탕 한번 먹으러 가야겠어요", "다음에 삼계탕 한번 먹으러 가야겠어요"],
  ["ko", ["삼계탕"], "삼게탕을 먹자", "삼계탕을 먹자"],
  ["ko", ["맥거핀"], "엄마의 운전은 맥가핀인가?", "엄마의 운전은 맥거핀인가?"],
  ["ko", ["모범 답안"], "모범답안을 외워서", "모범 답안을 외워서"],
  ["ja", ["ヤンバルクイナ"], "ヤンバルクイラとの出会い", "ヤンバルクイナとの出会い"],
  ["en", ["Quilter"], "Mr. Quilder is the apostle", "Mr. Quilter is the apostle"],
  ["en", ["TeamViewer"], "This leaves Team viewer with", "This leaves TeamViewer with"],
];

const KEPT: [string, string[], string][] = [
  ["ko", ["삼계탕"], "삼계탕을 먹자"],
  ["ko", ["삼계탕"], "일상이 이상하다"],
  ["ko", ["서울"], "서올에 갔다"], // too short to correct by similarity (boosted only)
  ["ko", ["백화점"], "백화점 근처예요"],
  ["ko", ["이상해"], "일상이 이상하다"], // 하다 is not a particle: no cut, no match
  ["ja", ["ヤンバルクイナ"], "ヤンバルクイナとの出会い"],
  ["en", ["TeamViewer"], "we will review the results"],
  ["en", ["Zoom"], "in the room"],
];

describe("keyword correction", () => {
  for (const [lang, kw, input, want] of CORRECTED)
    it(`${lang} ${kw}: ${input}`, () => assert.equal(correct(lang, kw)(input), want));
  for (const [lang, kw, s] of KEPT) it(`${lang} ${kw} kept: ${s}`, () => assert.equal(correct(lang, kw)(s), s));
  it("Korean distance is in jamo: 삼게탕 is one jamo from 삼계탕", () => {
    assert.ok(keywordDistance("삼게탕", "삼계탕", "ko") < 0.2);
    assert.ok(keywordDistance("일상", "삼계탕", "ko") > 0.5);
  });
});
