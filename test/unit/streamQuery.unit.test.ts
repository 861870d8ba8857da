// The streaming config parser (src/streaming/query.ts) and G.711 expansion: pure functions, no server.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expandG711 } from "../../src/streaming/g711.js";
import { type StreamQuery, StreamQuerySchema, streamQueryRefusal } from "../../src/streaming/query.js";

/** The query as the streaming route checks it: the parsed config, or the refusal's message. */
function parseStreamQuery(query: unknown): { ok: true; value: StreamQuery } | { ok: false; msg: string } {
  const parsed = StreamQuerySchema.safeParse(query);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, msg: streamQueryRefusal(issue.path, issue.message) };
}

describe("streaming query", () => {
  it("takes what livekit-plugins-rtzr 1.8.9 sends, with the defaults for the rest", () => {
    const q = parseStreamQuery({
      model_name: "sommers_ko",
      domain: "CALL",
      sample_rate: "8000",
      encoding: "LINEAR16",
      epd_time: "0.8",
      noise_threshold: "0.6",
      active_threshold: "0.8",
      use_punctuation: "false",
      keywords: "리턴제로,농협은행:5.0",
    });
    assert.ok(q.ok);
    assert.equal(q.value.language, "ko");
    assert.equal(q.value.model, "sommers");
    assert.equal(q.value.use_itn, true);
    assert.deepEqual(q.value.keywords, [
      { word: "리턴제로", boost: null },
      { word: "농협은행", boost: 5 },
    ]);
  });

  it("maps sommers_ja and whisper+language, and ignores unknown parameters", () => {
    const ja = parseStreamQuery({ sample_rate: "16000", model_name: "sommers_ja", future: "x" });
    assert.ok(ja.ok && ja.value.language === "ja");
    const wh = parseStreamQuery({ sample_rate: "16000", model_name: "whisper", language: "en" });
    assert.ok(wh.ok && wh.value.model === "whisper" && wh.value.language === "en");
  });

  it("names the field of the first problem", () => {
    const bad = parseStreamQuery({ sample_rate: "7999" });
    assert.ok(!bad.ok && bad.msg.startsWith("sample_rate"));
    const kw = parseStreamQuery({
      sample_rate: "8000",
      keywords: Array.from({ length: 101 }, (_, i) => `k${i}`).join(","),
    });
    assert.ok(!kw.ok && kw.msg.startsWith("keywords"));
  });
});

describe("G.711", () => {
  it("expands mu-law and A-law silence and full scale to the standard's values", () => {
    assert.deepEqual(
      [...new Int16Array(new Uint8Array(expandG711(Uint8Array.from([0xff, 0x7f, 0x00, 0x80]), "MULAW")).buffer)],
      [0, 0, -32124, 32124],
    );
    assert.deepEqual(
      [...new Int16Array(new Uint8Array(expandG711(Uint8Array.from([0xd5, 0x55, 0xaa, 0x2a]), "ALAW")).buffer)],
      [8, -8, 32256, -32256],
    );
  });
});
