// What the text options ask of the decoder and of the recognizer.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import { defaultRegistry } from "../../src/engine/models.js";
import { engineParams } from "../../src/pipeline/run.js";

const params = (config: object) =>
  engineParams(parseJobConfig(JSON.stringify(config)), "/tmp/a.wav", defaultRegistry("/models"), 3600);

describe("decoder hints from the text options", () => {
  it("defaults: words requested for the paragraph times, no prompt, no hotwords", () => {
    const p = params({});
    assert.equal(p.word_timestamps, true);
    assert.equal(p.initial_prompt, null);
    assert.equal(p.hotwords, null);
  });
  it("no paragraphs and no word timestamps: no words requested", () => {
    assert.equal(params({ use_paragraph_splitter: false }).word_timestamps, false);
    assert.equal(params({ use_paragraph_splitter: false, use_word_timestamp: true }).word_timestamps, true);
  });
  it("disfluency filter off: a verbatim prompt in the job's language", () => {
    assert.match(params({ use_disfluency_filter: false }).initial_prompt ?? "", /음|어/u);
    assert.match(params({ language: "ja", use_disfluency_filter: false }).initial_prompt ?? "", /えーと/u);
  });
  it("keywords become hotwords", () => {
    assert.equal(params({ keywords: ["삼계탕", "맥거핀"] }).hotwords, "삼계탕, 맥거핀");
  });
});

describe("domain", () => {
  it("CALL decodes without the VAD; GENERAL keeps the registry's setting", () => {
    assert.equal(params({ domain: "CALL" }).model.vad, false);
    assert.equal(params({}).model.vad, true);
    assert.equal(params({ domain: "CALL" }).model.beam_size, params({}).model.beam_size);
  });
});

describe("verbatim prompt language", () => {
  it("detect among one candidate uses that language's prompt; several candidates get none", () => {
    const en = { model_name: "whisper", language: "detect", use_disfluency_filter: false };
    assert.match(params({ ...en, language_candidates: ["en"] }).initial_prompt ?? "", /uh/u);
    assert.equal(params({ ...en, language_candidates: ["en", "ko"] }).initial_prompt, null);
  });
});
