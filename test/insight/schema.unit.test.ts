// Whatever an LLM writes, only a valid {title, summary, category} in the transcript's language reaches a response.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LlmBackend, LlmRequest } from "../../src/insight/backend.js";
import { copyRate } from "../../src/insight/copy.js";
import { generateInsight, insightForJob, transcriptOf } from "../../src/insight/index.js";
import { buildPrompt } from "../../src/insight/prompt.js";
import {
  CATEGORIES,
  CATEGORY_LABELS,
  categoryOf,
  dominantLanguage,
  INSIGHT_JSON_SCHEMA,
  InsightError,
  parseInsight,
  writtenIn,
} from "../../src/insight/schema.js";
import { splitWindows } from "../../src/insight/windows.js";

const KO = [
  { start_at: 0, duration: 1000, msg: "겨울 이불을 주문하고 싶은데요. 배송은 언제 되나요?", spk: 0, lang: "ko" },
];

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
    const item = parseInsight(
      '{"title":" 이불 주문\\n문의 ","summary":"겨울 이불 주문과 배송 일정을 물었다.","category":"문의","extra":"<script>"}',
      "ko",
    );
    assert.deepEqual(item, {
      title: "이불 주문 문의",
      summary: "겨울 이불 주문과 배송 일정을 물었다.",
      category: "문의",
    });
    assert.deepEqual(Object.keys(item), ["title", "summary", "category"]);
  });

  it("refuses a title equal to the summary and a summary copied from the transcript", () => {
    assert.throws(
      () => parseInsight('{"title":"이불 주문","summary":"이불 주문","category":"문의"}', "ko"),
      /title is the summary/,
    );
    const transcript =
      "지금 방송되고 있는 겨울 이불을 구입하려고 하는데요. 하나는 저희가 쓰고 다른 거는 어머니한테 보낼 거예요.";
    const copied = '{"title":"이불","summary":"지금 방송되고 있는 겨울 이불을 구입하려고 하는데요.","category":"문의"}';
    assert.throws(() => parseInsight(copied, "ko", transcript), /copy of the transcript/);
    assert.ok(copyRate("지금 방송되고 있는 겨울 이불을 구입하려고 하는데요.", transcript) > 0.95);
    assert.ok(copyRate("고객이 겨울 이불 두 채를 주문했다.", transcript) < 0.5);
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
    assert.equal(
      dominantLanguage(
        [
          { msg: "hello there", lang: "en" },
          { msg: "네", lang: "ko" },
        ],
        "ko",
      ),
      "en",
    );
  });

  it("a malformed first answer is retried; two malformed answers give insight [] and the reason, never the text", async () => {
    const llm = scripted([
      "not json at all",
      '{"title":"이불 주문","summary":"겨울 이불을 주문하고 배송일을 물었다.","category":"문의"}',
    ]);
    const item = await generateInsight({ utterances: KO, language: "ko" }, llm, 10_000);
    assert.equal(item.category, "문의");
    assert.deepEqual(
      llm.requests.map((r) => r.temperature),
      [0, 0.6],
    );

    const broken = scripted(['{"title":"x","summary":"<b>leak</b>","category":"hack"}', "}{"]);
    const r = await insightForJob({ utterances: KO, language: "ko" }, broken, 10_000);
    assert.deepEqual(r.insight, []);
    assert.match(r.error ?? "", /not an insight item|not JSON/);
    assert.ok(!JSON.stringify(r.insight).includes("leak"));
  });

  it("a backend error or no backend gives insight [] with a reason", async () => {
    const down = await insightForJob(
      { utterances: KO, language: "ko" },
      scripted([new Error("down"), new Error("down")]),
      5000,
    );
    assert.deepEqual([down.insight, down.reason], [[], "backend_error"]);
    const none = await insightForJob({ utterances: KO, language: "ko" }, null, 5000);
    assert.deepEqual(none, { insight: [], error: "no insight model is configured", reason: "not_configured" });
  });

  it("puts the language, prompt, keywords and transcript in the last message; system and examples never change", () => {
    const p = buildPrompt({
      transcript: transcriptOf(KO),
      language: "ko",
      prompt: "고객 불만 위주로",
      keywords: ["이불", "배송"],
    });
    assert.match(p.user, /Language: Korean/);
    assert.match(p.user, /Focus \(from the client\): 고객 불만 위주로/);
    assert.match(p.user, /Keywords: 이불, 배송/);
    assert.match(p.user, /겨울 이불을 주문/);
    for (const label of Object.keys(CATEGORY_LABELS)) assert.ok(p.system.includes(label));
    const en = buildPrompt({ transcript: "hi", language: "en" });
    assert.equal(en.system, p.system);
    // Outside the examples' languages the answer's language is asked for again, last (whisper_jfk came back Chinese).
    assert.match(en.user, /hi\nWrite the title and the summary in English, in your own words\.$/);
    assert.doesNotMatch(p.user, /Write the title/);
    assert.deepEqual(en.examples, p.examples);
    for (const ex of p.examples)
      assert.doesNotThrow(() =>
        parseInsight(
          ex.assistant,
          /Language: (\w+)/u.exec(ex.user)![1] === "Korean" ? "ko" : /Japanese/.test(ex.user) ? "ja" : "en",
        ),
      );
    const two = transcriptOf([
      { ...KO[0]!, spk: 0 },
      { ...KO[0]!, spk: 1 },
    ]);
    assert.match(two, /^\[0\] .*\n\[1\] /);
  });

  it("a long transcript is summarised map-reduce: notes per window, then the item from the notes", async () => {
    const line = "고객이 보험금 청구 서류와 입원 일당, 지급 계좌를 물어보고 상담원이 하나씩 안내했습니다.";
    const long = Array.from({ length: 60 }, (_, i) => ({
      start_at: i * 1000,
      duration: 1000,
      msg: line,
      spk: i % 2,
      lang: "ko",
    }));
    const windows = splitWindows(transcriptOf(long).split("\n"), 1600);
    assert.ok(windows.length >= 2 && windows.every((w) => w.length <= 1600));
    const notes = windows.map((_, i) => `{"notes":"${i + 1}번째 부분: 보험금 청구 안내"}`);
    const llm = scripted([
      ...notes,
      '{"summary":"보험금 청구 절차를 안내받았다.","title":"보험금 청구","category":"문의"}',
    ]);
    const item = await generateInsight({ utterances: long, language: "ko" }, llm, 10_000);
    assert.equal(item.title, "보험금 청구");
    assert.deepEqual(
      llm.requests.map((r) => r.schema),
      [...windows.map(() => "notes"), "item"],
    );
    assert.match(llm.requests.at(-1)!.user, /1\. 1번째 부분/);
  });

  it("the time limit covers every call: an aborted generation is a timeout, not a retry", async () => {
    const slow: LlmBackend = {
      name: "slow",
      complete: (req) =>
        new Promise((_, reject) => req.signal.addEventListener("abort", () => reject(new Error("aborted")))),
      close: async () => {},
    };
    const alive = setTimeout(() => {}, 5000); // AbortSignal.timeout's timer alone does not keep the test process up
    const r = await insightForJob({ utterances: KO, language: "ko" }, slow, 50);
    clearTimeout(alive);
    assert.deepEqual(r, { insight: [], error: "insight generation timed out", reason: "timeout" });
  });

  it("a backend that ignores the abort (llama.cpp in the middle of a batch) never holds the job past its limit", async () => {
    let finished = false;
    const deaf: LlmBackend = {
      name: "deaf",
      // Answers a valid item only after 1.5 s, whatever the signal says.
      complete: () =>
        new Promise((resolve) =>
          setTimeout(() => {
            finished = true;
            resolve('{"summary":"이불을 주문했다.","title":"이불 주문","category":"customer_calls_business"}');
          }, 1500),
        ),
      close: async () => {},
    };
    const t0 = Date.now();
    const r = await insightForJob({ utterances: KO, language: "ko" }, deaf, 100);
    const waited = Date.now() - t0;
    assert.deepEqual(r, { insight: [], error: "insight generation timed out", reason: "timeout" });
    assert.ok(waited < 600, `waited ${waited} ms for a 100 ms limit`);
    assert.equal(finished, false);
  });
});

describe("insight categories", () => {
  it("the model's English label becomes one of the spec's four values; a spec value is taken as it is", () => {
    const item = (c: string): string =>
      parseInsight(`{"title":"이불 주문","summary":"겨울 이불을 주문했다.","category":"${c}"}`, "ko").category;
    assert.deepEqual(Object.keys(CATEGORY_LABELS).map(item), ["문의", "업무", "일상", "스팸"]);
    for (const c of CATEGORIES) assert.equal(item(c), c);
    assert.throws(() => item("inquiry"), InsightError);
  });

  it("spam takes both the label and `unsolicited: true`; a disagreement is not spam", () => {
    const item = (unsolicited: boolean | undefined, c: string): string =>
      parseInsight(
        `{"summary":"대출 상품을 권유했다.","title":"대출 권유",${unsolicited === undefined ? "" : `"unsolicited":${unsolicited},`}"category":"${c}"}`,
        "ko",
      ).category;
    assert.equal(item(true, "unsolicited_offer_or_scam"), "스팸");
    assert.equal(item(false, "unsolicited_offer_or_scam"), "문의");
    assert.equal(item(true, "work_colleagues"), "업무");
    assert.equal(item(false, "family_friends"), "일상");
    assert.equal(item(undefined, "unsolicited_offer_or_scam"), "스팸"); // another backend's answer: its label stands
    assert.equal(categoryOf("스팸", undefined), "스팸");
  });

  it("the item's schema asks `unsolicited` after the title and before the category", () => {
    assert.deepEqual(Object.keys(INSIGHT_JSON_SCHEMA.properties), ["summary", "title", "unsolicited", "category"]);
    assert.deepEqual(INSIGHT_JSON_SCHEMA.required, ["summary", "title", "unsolicited", "category"]);
  });
});
