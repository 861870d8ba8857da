import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { loadModelRegistry } from "../../src/engine/models.js";

function modelsFile(body: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-models-"));
  const file = path.join(dir, "models.json");
  fs.writeFileSync(file, JSON.stringify(body));
  return file;
}

describe("SORI_MODELS_FILE: decoding options per entry", () => {
  it("sends each entry's preset, with the fields an entry overrides", () => {
    const file = modelsFile({ whisper: { path: "big", beam_size: 5, decode: { batch_size: 8, min_logprob: -1.5 } } });
    const registry = loadModelRegistry("/models", file);
    assert.deepEqual(registry.whisper.decode, { batch_size: 8, min_logprob: -1.5, preset: "whisper" });
    assert.equal(registry.whisper.path, path.join(path.dirname(file), "big"));
    assert.deepEqual(registry.sommers.decode, { preset: "sommers" }); // the built-in entry
  });

  it("refuses at start a field the engine does not know, or a bad value, naming it", () => {
    assert.throws(
      () => loadModelRegistry("/models", modelsFile({ sommers: { path: "m", decode: { batch_sz: 8 } } })),
      /sommers\.decode\.batch_sz is not a decoding option/,
    );
    assert.throws(
      () => loadModelRegistry("/models", modelsFile({ whisper: { path: "m", decode: { batch_size: 0 } } })),
      /whisper\.decode\.batch_size must be > 0/,
    );
    assert.throws(
      () => loadModelRegistry("/models", modelsFile({ whisper: { path: "m", decode: { tail_s: "long" } } })),
      /models\.json/,
    );
  });
});
