// Whatever an LLM writes, only a valid {title, summary, category} in the transcript's language reaches a response.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateInsight, insightForJob, transcriptOf } from "../../src/insight/index.js";
import type { LlmBackend, LlmRequest } from "../../src/insight/backend.js";
import { buildPrompt, clipTranscript } from "../../src/insight/prompt.js";
import { CATEGORIES, dominantLanguage, InsightError, parseInsight, writtenIn } from "../../src/insight/schema.js";

const KO = [{ start_at: 0, duration: 1000, msg: "겨울 이불을 주문하고 싶은데요. 배송은 언제 되나요?", spk: 0, lang: "ko" }];

/** A backend that answers from a script, recording what it was asked (no model: this tests our side). */
function scripted(answers: (string | Error)[]): LlmBackend & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    name: "scripted",
    requests,
    async complete(req) {
      requests.push(req);
      const a = answers.shift() ?? new Error("no more answers");
      if (a instanceof Error) throw a;
      return a;
    },
    async close() {},
  };
}

describe("insight output validation", () => {
  it("accepts a valid item and returns exactly its three fields, cleaned", () => {
    const item = parseInsight('{"title":" 이불 주문\\n문의 ","summary":"겨울 이불 주문과 배송 일정을 물었다.","category":"문의","extra":"<script>"}', "ko");
    assert.deepEqual(item, { title: "이불 주문 문의", summary: "겨울 이불 주문과 배송 일정을 물었다.", category: "문의" });
    assert.deepEqual(Object.keys(item), ["title", "summary", "category"]);
  });

  it("rejects malformed answers with InsightError", () => {
    const bad = [
      "",
      "Sure! Here is the JSON: {",
      '{"title":"제목","summary":"요약"}',
      '{"title":"제목","summary":"요약","category":"기타"}',
      '{"title":"","summary":"요약","category":"업무"}',
      '{"title":123,"summary":"요약","category":"업무"}',
      '[{"title":"제목","summary":"요약","category":"업무"}]',
      '{"title":"제목","summary":"' + "가".repeat(5000) + '","category":"업무"}',
      '{"title":"Order","summary":"The caller asked about a delivery.","category":"문의"}', // not Korean
    ];
    for (const raw of bad) assert.throws(() => parseInsight(raw, "ko"), InsightError, raw.slice(0, 60));
  });

  it("checks the script of the transcript's language", () => {
    assert.ok(writtenIn("회의 일정 안내", "ko"));
    assert.ok(!writtenIn("meeting schedule", "ko"));
    assert.ok(writtenIn("会議の予定を確認した", "ja"));
    assert.ok(writtenIn("A meeting about revenue", "en"));
    assert.ok(!writtenIn("회의", "en"));
    assert.equal(dominantLanguage([{ msg: "hello there", lang: "en" }, { msg: "네", lang: "ko" }], "ko"), "en");
  });

  it("a malformed first answer is retried; two malformed answers give insight [] and the reason, never the text", async () => {
    const llm = scripted(["not json at all", '{"title":"이불 주문","summary":"겨울 이불을 주문하고 배송일을 물었다.","category":"문의"}']);
    const item = await generateInsight({ utterances: KO, language: "ko" }, llm, 10_000);
    assert.equal(item.category, "문의");
    assert.deepEqual(llm.requests.map((r) => r.temperature), [0, 0.6]);

    const broken = scripted(['{"title":"x","summary":"<b>leak</b>","category":"hack"}', "}{"]);
    const r = await insightForJob({ utterances: KO, language: "ko" }, broken, 10_000);
    assert.deepEqual(r.insight, []);
    assert.match(r.error ?? "", /not an insight item|not JSON/);
    assert.ok(!JSON.stringify(r.insight).includes("leak"));
  });

  it("a backend error or no backend gives insight [] with a reason", async () => {
    assert.deepEqual((await insightForJob({ utterances: KO, language: "ko" }, scripted([new Error("down"), new Error("down")]), 5000)).insight, []);
    const none = await insightForJob({ utterances: KO, language: "ko" }, null, 5000);
    assert.deepEqual(none, { insight: [], error: "no insight model is configured" });
  });

  it("puts the prompt, keywords and transcript in the request, in the transcript's language", () => {
    const p = buildPrompt({ transcript: transcriptOf(KO), language: "ko", prompt: "고객 불만 위주로", keywords: ["이불", "배송"] });
    assert.match(p.user, /관점: 고객 불만 위주로/);
    assert.match(p.user, /핵심어: 이불, 배송/);
    assert.match(p.user, /겨울 이불을 주문/);
    for (const c of CATEGORIES) assert.ok(p.user.includes(c));
    assert.match(buildPrompt({ transcript: "hi", language: "en" }).system, /English/);
    assert.equal(clipTranscript("a".repeat(5000)).length <= 3003, true);
    const two = transcriptOf([{ ...KO[0]!, spk: 0 }, { ...KO[0]!, spk: 1 }]);
    assert.match(two, /^\[0\] .*\n\[1\] /);
  });
});
