// parseJobConfig against the spec's config table: defaults, every invalid case (a domain InvalidInput naming the
// field, which the API answers with 400 H0001), the cross-field rules, and unknown fields being dropped.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toApiError } from "../../src/api/errorMapping.js";
import { InvalidInput } from "../../src/domain/errors.js";
import { MAX_KEYWORD_CHARS, MAX_KEYWORDS, parseJobConfig } from "../../src/domain/jobConfig.js";

const parse = (config: unknown) => parseJobConfig(typeof config === "string" ? config : JSON.stringify(config));

/** Asserts that parsing fails with H0001 and that the message mentions `field`. */
function rejects(config: unknown, field: string | RegExp): void {
  assert.throws(
    () => parse(config),
    (e: unknown) => {
      assert.ok(e instanceof InvalidInput, `expected InvalidInput, got ${String(e)}`);
      assert.equal(toApiError(e).code, "H0001");
      assert.equal(toApiError(e).status, 400);
      if (typeof field === "string")
        assert.ok(e.message.includes(field), `message ${JSON.stringify(e.message)} should name ${field}`);
      else assert.match(e.message, field);
      return true;
    },
    JSON.stringify(config),
  );
}

describe("parseJobConfig", () => {
  it("fills every default from an empty object", () => {
    assert.deepEqual(parse({}), {
      model_name: "sommers",
      language: "ko",
      use_diarization: false,
      diarization: { spk_count: 0 },
      use_multi_channel: false,
      use_itn: true,
      use_disfluency_filter: true,
      use_profanity_filter: false,
      use_paragraph_splitter: true,
      paragraph_splitter: { max: 50 },
      domain: "GENERAL",
      use_word_timestamp: false,
      use_refinement: false,
      use_insight: false,
      insight: {},
    });
  });

  it("fills nested defaults inside a partly given object", () => {
    const c = parse({ use_diarization: true, diarization: {}, paragraph_splitter: {} });
    assert.deepEqual(c.diarization, { spk_count: 0 });
    assert.deepEqual(c.paragraph_splitter, { max: 50 });
  });

  it("keeps valid values as given", () => {
    const c = parse({
      model_name: "whisper",
      language: "multi",
      language_candidates: ["ko", "ja", "zh", "en"],
      use_diarization: true,
      diarization: { spk_count: 3 },
      use_itn: false,
      use_paragraph_splitter: true,
      paragraph_splitter: { max: 1 },
      domain: "CALL",
      use_word_timestamp: true,
      keywords: ["a".repeat(MAX_KEYWORD_CHARS), "소리"],
      use_insight: true,
      insight: { prompt: "요약" },
    });
    assert.equal(c.model_name, "whisper");
    assert.equal(c.language, "multi");
    assert.deepEqual(c.language_candidates, ["ko", "ja", "zh", "en"]);
    assert.deepEqual(c.diarization, { spk_count: 3 });
    assert.equal(c.use_itn, false);
    assert.deepEqual(c.paragraph_splitter, { max: 1 });
    assert.equal(c.domain, "CALL");
    assert.equal(c.keywords?.length, 2);
    assert.equal(c.insight.prompt, "요약");
  });

  it("accepts ko and ja with either model, and detect/multi with whisper", () => {
    for (const language of ["ko", "ja"] as const) {
      assert.equal(parse({ language }).language, language);
      assert.equal(parse({ model_name: "whisper", language }).language, language);
    }
    for (const language of ["detect", "multi"] as const) {
      assert.equal(parse({ model_name: "whisper", language }).language, language);
    }
  });

  it("with whisper, accepts every language Whisper knows; language_candidates default to ko, ja, zh, en for detect/multi", () => {
    assert.equal(parse({ model_name: "whisper", language: "en", use_itn: true }).language, "en");
    assert.equal(parse({ model_name: "whisper", language: "de" }).language, "de");
    assert.equal(parse({ model_name: "whisper", language: "ko" }).language_candidates, undefined);
    for (const language of ["detect", "multi"]) {
      assert.deepEqual(parse({ model_name: "whisper", language }).language_candidates, ["ko", "ja", "zh", "en"]);
      assert.deepEqual(
        parse({ model_name: "whisper", language, language_candidates: ["ko", "en"] }).language_candidates,
        ["ko", "en"],
      );
    }
    // Accepted and ignored with a fixed language, as the real service does (probe P1).
    assert.equal(parse({ model_name: "whisper", language: "ko", language_candidates: ["ko", "en"] }).language, "ko");
  });

  it("the real service's rules (rtzr-cli probes T1, T2, T5-T7, T9, P5): 400 H0001 with its messages", () => {
    rejects(
      { model_name: "sommers", diarization: { spk_count: 2 } },
      /diarization cannot be used without use_diarization/,
    );
    rejects(
      { model_name: "sommers", use_diarization: false, diarization: { spk_count: 2 } },
      /diarization cannot be used without use_diarization/,
    );
    rejects({ model_name: "sommers", language: "detect" }, /unsupported language/);
    rejects({ model_name: "sommers", language: "ko", language_candidates: ["ko", "en"] }, /unsupported language/);
    rejects({ model_name: "sommers", language_candidates: ["ko", "en"] }, /unsupported language/);
    rejects({ model_name: "sommers", language: "en" }, /unsupported language/);
    rejects({ model_name: "whisper" }, /unsupported language/);
    // Accepted (T3, T4, T8, T10).
    parse({ model_name: "sommers", paragraph_splitter: { max: 80 } });
    parse({ model_name: "sommers", use_paragraph_splitter: false, paragraph_splitter: { max: 80 } });
    parse({ model_name: "sommers", language: "ja", keywords: ["에스티티"] });
    parse({ model_name: "sommers", totally_made_up_field: true });
  });

  it("accepts spk_count 0 and the keyword bounds exactly", () => {
    assert.equal(parse({ use_diarization: true, diarization: { spk_count: 0 } }).diarization.spk_count, 0);
    const keywords = Array.from({ length: MAX_KEYWORDS }, (_, i) => `k${i}`);
    assert.equal(parse({ keywords }).keywords?.length, MAX_KEYWORDS);
    assert.equal(MAX_KEYWORDS, 500);
    assert.equal(MAX_KEYWORD_CHARS, 20);
  });

  it("ignores unknown fields, top-level and nested, and drops them", () => {
    const c = parse({
      something_new: 1,
      use_diarization: true,
      diarization: { spk_count: 2, other: true },
      insight: { x: 1 },
    }) as unknown as Record<string, unknown>;
    assert.equal("something_new" in c, false);
    assert.deepEqual(c.diarization, { spk_count: 2 });
    assert.deepEqual(c.insight, {});
  });

  it("refuses __proto__ and constructor.prototype keys at any depth, as the multipart parser does for JSON parts", () => {
    rejects('{"insight": {"__proto__": {"x": 1}}}', "__proto__");
    rejects('{"a": [{"constructor": {"prototype": {}}}]}', "constructor.prototype");
    assert.equal(parse('{"constructor": 1}').model_name, "sommers");
  });

  describe("400 H0001", () => {
    it("for a missing config part", () => {
      assert.throws(
        () => parseJobConfig(undefined),
        (e: unknown) => e instanceof InvalidInput && toApiError(e).code === "H0001" && /config/.test(e.message),
      );
    });
    it("for text that is not JSON", () => {
      for (const text of ["{model_name:", "", '{"a":1', "undefined"]) rejects(text, /JSON/);
    });
    it("for JSON that is not an object", () => {
      for (const text of ["[1,2]", "null", '"{}"', "42", "true"]) rejects(text, /object/);
    });

    const cases: [string, unknown, string][] = [
      ["unknown model", { model_name: "gpt" }, "model_name"],
      ["model as a number", { model_name: 1 }, "model_name"],
      ["unsupported language", { language: "fr" }, "language"],
      ["language in upper case", { language: "KO" }, "language"],
      ["whisper without language", { model_name: "whisper" }, "language"],
      ["detect with sommers", { language: "detect" }, "language"],
      ["multi with sommers", { model_name: "sommers", language: "multi" }, "language"],
      [
        "language_candidates not ISO 639-1",
        { model_name: "whisper", language: "detect", language_candidates: ["xx"] },
        "language_candidates",
      ],
      [
        "language_candidates three-letter code",
        { model_name: "whisper", language: "detect", language_candidates: ["haw"] },
        "language_candidates",
      ],
      [
        "language_candidates upper case",
        { model_name: "whisper", language: "detect", language_candidates: ["EN"] },
        "language_candidates",
      ],
      [
        "language_candidates not an array",
        { model_name: "whisper", language: "detect", language_candidates: "ko" },
        "language_candidates",
      ],
      [
        "language_candidates empty",
        { model_name: "whisper", language: "multi", language_candidates: [] },
        "language_candidates",
      ],
      ["use_diarization as string", { use_diarization: "true" }, "use_diarization"],
      ["spk_count < 0", { use_diarization: true, diarization: { spk_count: -1 } }, "diarization.spk_count"],
      ["spk_count fractional", { use_diarization: true, diarization: { spk_count: 1.5 } }, "diarization.spk_count"],
      ["spk_count as string", { use_diarization: true, diarization: { spk_count: "2" } }, "diarization.spk_count"],
      ["diarization not an object", { use_diarization: true, diarization: 2 }, "diarization"],
      ["use_itn as string", { use_itn: "yes" }, "use_itn"],
      ["use_disfluency_filter as number", { use_disfluency_filter: 1 }, "use_disfluency_filter"],
      ["use_profanity_filter null", { use_profanity_filter: null }, "use_profanity_filter"],
      ["use_paragraph_splitter as string", { use_paragraph_splitter: "false" }, "use_paragraph_splitter"],
      ["paragraph max < 1", { paragraph_splitter: { max: 0 } }, "paragraph_splitter.max"],
      ["paragraph max fractional", { paragraph_splitter: { max: 2.5 } }, "paragraph_splitter.max"],
      ["bad domain", { domain: "MEETING" }, "domain"],
      ["domain in lower case", { domain: "general" }, "domain"],
      ["use_word_timestamp as string", { use_word_timestamp: "1" }, "use_word_timestamp"],
      ["keywords not an array", { keywords: "a,b" }, "keywords"],
      ["keyword not a string", { keywords: [1] }, "keywords"],
      ["keyword empty", { keywords: [""] }, "keywords"],
      ["keyword too long", { keywords: ["a".repeat(MAX_KEYWORD_CHARS + 1)] }, "keywords"],
      ["too many keywords", { keywords: Array.from({ length: MAX_KEYWORDS + 1 }, (_, i) => `k${i}`) }, "keywords"],
      ["use_refinement as string", { use_refinement: "yes" }, "use_refinement"],
      ["use_insight as number", { use_insight: 0 }, "use_insight"],
      ["insight.prompt not a string", { use_insight: true, insight: { prompt: 5 } }, "insight.prompt"],
      ["use_multi_channel as string", { use_multi_channel: "true" }, "use_multi_channel"],
    ];
    for (const [name, config, field] of cases) {
      it(`${name} (names ${field})`, () => rejects(config, field));
    }

    it("refinement combined with multi-channel, naming both fields", () => {
      rejects({ use_refinement: true, use_multi_channel: true }, /use_refinement.*use_multi_channel/);
      // Either one alone is fine.
      assert.equal(parse({ use_refinement: true }).use_refinement, true);
      assert.equal(parse({ use_multi_channel: true }).use_multi_channel, true);
    });

    it("the message is prefixed with the config path", () => {
      assert.throws(
        () => parse({ paragraph_splitter: { max: 0 } }),
        (e: unknown) => e instanceof InvalidInput && e.message.startsWith("config.paragraph_splitter.max"),
      );
    });
  });
});
