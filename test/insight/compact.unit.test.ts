// The transcript the model reads: backchannels out, one line per turn (src/insight/compact.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compactLines, isBackchannel } from "../../src/insight/compact.js";

const u = (spk: number, msg: string, lang = "ko") => ({ start_at: 0, duration: 1000, msg, spk, lang });

describe("compact transcript", () => {
  it("drops utterances that only acknowledge, in ko, ja and en, and keeps answers with content", () => {
    for (const m of ["네.", "네, 네", "예", "음…", "はい。", "ええ", "Yeah.", "OK", "mhm"])
      assert.ok(isBackchannel(m), m);
    for (const m of ["네, 맞아요", "아니요", "はい、三名です", "yes, at seven", "3시요"])
      assert.ok(!isBackchannel(m), m);
  });

  it("merges a speaker's consecutive utterances into one turn, tagged with the speaker's number", () => {
    const lines = compactLines([
      u(3, "안녕하세요, 행복꽃집입니다."),
      u(1, "장미 꽃다발을 주문하려고요."),
      u(1, "내일 오후까지요."),
      u(3, "네."),
      u(1, "네"),
      u(3, "배송비 포함 5만 원입니다."),
      u(1, "  "),
    ]);
    assert.deepEqual(lines, [
      "[3] 안녕하세요, 행복꽃집입니다.",
      "[1] 장미 꽃다발을 주문하려고요. 내일 오후까지요.",
      "[3] 배송비 포함 5만 원입니다.",
    ]);
  });

  it("a single speaker has no tags; a transcript of nothing but backchannels is kept as it is", () => {
    assert.deepEqual(compactLines([u(0, "Hello there."), u(0, "It is me.")]), ["Hello there. It is me."]);
    assert.deepEqual(compactLines([u(0, "네."), u(1, "네")]), ["[0] 네.", "[1] 네"]);
  });
});
