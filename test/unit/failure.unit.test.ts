// How engine failures become a job's error: codes, retryability, and no server paths in what the client sees.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EngineError } from "../../src/engine/protocol.js";
import { hidePaths, toFailure } from "../../src/jobs/failure.js";

describe("toFailure", () => {
  const cases: [EngineError["code"], string, boolean][] = [
    ["audio_decode_failed", "H0010", false],
    ["audio_too_long", "H0006", false],
    ["model_load_failed", "E500", false],
    ["bad_request", "E500", false],
    ["internal", "E500", true],
    ["engine_crashed", "E500", true],
    ["engine_timeout", "E500", true],
  ];
  for (const [engineCode, code, retryable] of cases) {
    it(`${engineCode} → ${code}${retryable ? ", retried" : ", final"}`, () => {
      const f = toFailure(new EngineError(engineCode, "x"));
      assert.equal(f.code, code);
      assert.equal(f.retryable, retryable);
    });
  }
  it("anything else is a retryable E500", () => {
    assert.deepEqual(toFailure(new Error("boom")), {
      code: "E500",
      message: "transcription failed: boom",
      retryable: true,
    });
  });
});

describe("hidePaths", () => {
  it("names the audio and hides other server paths, leaving URLs and ratios alone", () => {
    assert.equal(
      hidePaths("cannot decode /srv/data/blobs/ab/cd: bad", "/srv/data/blobs/ab/cd"),
      "cannot decode the uploaded file: bad",
    );
    assert.equal(
      hidePaths("model directory not found: /opt/sori/models/base", null),
      "model directory not found: <server path>",
    );
    assert.equal(hidePaths("see http://host/a/b, ratio 1/2", null), "see http://host/a/b, ratio 1/2");
  });
});
