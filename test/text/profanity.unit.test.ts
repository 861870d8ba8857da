// Profanity filter: masks per character, in ko (incl. spaced and jamo forms), ja and en; no false positives.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runOnString } from "../../src/text/edits.js";
import { profanityEdits } from "../../src/text/profanity.js";

const mask = (lang: string) => (s: string) => runOnString(s, (t) => profanityEdits(t, lang));

const MASKED: [string, string, string][] = [
  ["ko", "아 씨발 진짜", "아 ** 진짜"],
  ["ko", "이 개새끼야", "이 ***야"],
  ["ko", "씨 발 뭐야", "* * 뭐야"],
  ["ko", "ㅅㅂ 짜증나", "** 짜증나"],
  ["ko", "병신같이 굴지마", "**같이 굴지마"],
  ["ko", "존나 좋아", "** 좋아"],
  ["ko", "이런 상노무 자식을 봤나", "이런 *** 자식을 봤나"],
  ["ja", "死ねよ", "**よ"],
  ["ja", "クソ野郎が", "****が"],
  ["en", "What the fuck is this shit", "What the **** is this ****"],
  ["en", "Fucking great", "******* great"],
];

// Ordinary words that contain or resemble a listed word.
const CLEAN: [string, string][] = [
  ["ko", "시발점에서 출발했다"],
  ["ko", "아저씨 발이 아파요"],
  ["ko", "장난감이 망가졌어요"],
  ["ko", "유모차를 밀었다"],
  ["ko", "자위대가 파견됐다"],
  ["ko", "미친 듯이 달렸다"],
  ["ko", "새끼 고양이가 귀여워"],
  ["ko", "불이 꺼져 있어요"],
  ["ko", "껌을 씹다"],
  ["ko", "상당히 현실성있고 중간중간 코믹요소도 좋았다"],
  ["ja", "嫌いな食べ物"],
  ["ja", "女の子が走る"],
  ["ja", "死んだ魚"],
  ["en", "Scunthorpe is a town"],
  ["en", "We passed the class assessment"],
  ["en", "Dick Cheney and the cocktail"],
  ["en", "Shitake? No, shiitake mushrooms"],
];

describe("profanity filter", () => {
  for (const [lang, input, want] of MASKED) it(`${lang}: ${input}`, () => assert.equal(mask(lang)(input), want));
  for (const [lang, s] of CLEAN) it(`${lang} clean: ${s}`, () => assert.equal(mask(lang)(s), s));
  it("masks keep the length of the word", () => assert.equal(mask("en")("shit").length, 4));
});
