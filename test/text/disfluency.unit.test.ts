// Disfluency filter: fillers and stutters go, real words that look like fillers stay.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { disfluencyEdits } from "../../src/text/disfluency.js";
import { applyEdits, joinTokens, runOnString } from "../../src/text/edits.js";
import { toTokens } from "../../src/text/index.js";

const filter = (lang: string) => (s: string) => runOnString(s, (t) => disfluencyEdits(t, lang));

const CASES: [string, string, string][] = [
  ["ko", "음 그러니까 제 말은요", "그러니까 제 말은요"],
  ["ko", "어 네 맞아요", "네 맞아요"],
  ["ko", "그 그 그러니까 내일 가요", "그러니까 내일 가요"],
  ["ko", "저, 예약은 하지 않았는데", "예약은 하지 않았는데"],
  ["ko", "뭐... 괜찮아요", "괜찮아요"],
  ["ko", "아 그렇구나 음... 알겠어요", "그렇구나 알겠어요"],
  ["ko", "저 저는 학생입니다", "저는 학생입니다"],
  ["ko", "어...그게 말이죠", "그게 말이죠"],
  ["ko", "회의는 어 세 시에 음 시작해요", "회의는 세 시에 시작해요"],
  ["ja", "えーと、今日は晴れです", "今日は晴れです"],
  ["ja", "あのー、すみません", "すみません"],
  ["ja", "えっと明日行きます", "明日行きます"],
  ["ja", "まあ、いいでしょう", "いいでしょう"],
  ["ja", "わ、わたしです", "わたしです"],
  ["en", "Um, last year we were already on Zoom", "last year we were already on Zoom"],
  ["en", "the uh, results for the year", "the results for the year"],
  ["en", "I I think so", "I think so"],
];

// Real words that must stay.
const KEPT: [string, string][] = [
  ["ko", "그 사람이 누구예요?"],
  ["ko", "저는 학생입니다"],
  ["ko", "뭐 먹을래요?"],
  ["ko", "음식이 맛있어요"],
  ["ko", "어디 가세요?"],
  ["ko", "아이가 웃어요"],
  ["ko", "빨리 빨리 와"],
  ["ko", "네, 좋아요. 몇 시에 어디로 가면 돼요?"],
  ["ja", "あの男の話を聞かせたかった"],
  ["ja", "その本をください"],
  ["ja", "まあまあです"],
  ["en", "I like it very very much"],
  ["en", "Umbrella and uhlan"],
];

describe("disfluency filter", () => {
  for (const [lang, input, want] of CASES) it(`${lang}: ${input}`, () => assert.equal(filter(lang)(input), want));
  for (const [lang, s] of KEPT) it(`${lang} kept: ${s}`, () => assert.equal(filter(lang)(s), s));
});

describe("disfluency filter on a real phone memo's transcript", () => {
  it("ko: fillers and a restarted word go", () => {
    assert.equal(
      filter("ko")("어... 어... 그게 말이죠 어제... 어제 학교를 갔어요 음... 저 미안합니다"),
      "그게 말이죠 어제 학교를 갔어요 저 미안합니다",
    );
  });
});

// The service runs the filter on word tokens (each with its leading space), not on a plain string: a filler taken
// with the space after it must not glue its neighbours together ("I thinkwe", "회의는세 시에").
describe("disfluency filter on word tokens, as the pipeline runs it", () => {
  const MID: [string, string, string][] = [
    ["en", "I think uh, we should", "I think we should"],
    ["en", "we hope that um, next year.", "we hope that next year."],
    ["en", "so I I think so", "so I think so"],
    ["ko", "회의는 어 세 시에 음 시작해요", "회의는 세 시에 시작해요"],
    ["ko", "아 그렇구나 음... 알겠어요", "그렇구나 알겠어요"],
    ["ko", "그러니까 그 그 사람이요", "그러니까 그 사람이요"],
  ];
  for (const [lang, msg, want] of MID) {
    it(`${lang}: ${msg}`, () => {
      const words = msg.split(" ").map((w, i) => ({ text: (i ? " " : "") + w, start_at: i * 300, duration: 250 }));
      for (const u of [{ msg }, { msg, words }]) {
        const tokens = toTokens({ start_at: 0, duration: 3000, spk: 0, lang, ...u });
        const out = applyEdits(tokens, disfluencyEdits(joinTokens(tokens), lang));
        assert.equal(joinTokens(out), want, `${"words" in u ? "with" : "without"} words`);
        assert.equal(joinTokens(out), filter(lang)(msg), "the same as the string form");
      }
    });
  }
});
