// SORI_MODELS_FILE's `diarization` object as the service reads it at start (docs/diarization.md, "Bring your own
// models"): paths resolved, each model loaded and run once by the engine's check, a bad one refused naming why. The
// models are engine/tests/diarization_shapes.py's random-weight ONNX models (a process: not a unit test).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { loadDiarizationModels } from "../../src/engine/models.js";
import { ROOT } from "../helpers/server.js";

const PYTHON = path.join(ROOT, ".venv", "bin", "python");

function modelsFile(body: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-models-"));
  const file = path.join(dir, "models.json");
  fs.writeFileSync(file, JSON.stringify(body));
  return file;
}

describe("SORI_MODELS_FILE: an operator's diarization models", () => {
  /** The random-weight ONNX models of engine/tests/diarization_shapes.py, built into a fresh directory. */
  function shapes(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-diar-models-"));
    const r = spawnSync(PYTHON, [path.join(ROOT, "engine", "tests", "diarization_shapes.py"), dir], {
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    return dir;
  }

  it("none named: the built-in models, nothing passed to the engine", () => {
    assert.deepEqual(loadDiarizationModels(undefined), {});
    assert.deepEqual(loadDiarizationModels(modelsFile({ whisper: { path: "m" } })), {});
  });

  it("passes the models with their paths resolved against the file, after the engine ran each once", () => {
    const dir = shapes();
    const file = path.join(dir, "models.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        diarization: {
          segmentation: { path: "segmentation.onnx", sample_rate: 8000 },
          embedding: { path: "embedding.onnx" },
          options: { min_turn_s: 0.3 },
        },
      }),
    );
    const env = loadDiarizationModels(file);
    assert.deepEqual(JSON.parse(env.SORI_DIARIZATION_MODELS!), {
      segmentation: { path: path.join(dir, "segmentation.onnx"), sample_rate: 8000 },
      embedding: { path: path.join(dir, "embedding.onnx") },
      options: { min_turn_s: 0.3 },
    });
  });

  it("refuses at start a model that does not fit, a field it does not know, or an unknown option, naming it", () => {
    const dir = shapes();
    const seg = path.join(dir, "segmentation.onnx");
    const emb = path.join(dir, "embedding.onnx");
    const cases: [unknown, RegExp][] = [
      [{ segmentation: { path: seg } }, /declares sample_rate 8000, the models file 16000/],
      [{ segmentation: { path: emb } }, /segmentation model input must be/],
      [{ embedding: { path: seg, sample_rate: 8000 } }, /embedding model input must be/],
      [{ embedding: { path: path.join(dir, "none.onnx") } }, /no such file/],
      [{ embedding: { path: emb, sample_rate: 44100 } }, /diarization\.embedding\.sample_rate/],
      [{ embedding: { path: emb, chunk_s: 5 } }, /diarization\.embedding/],
      [{ embedding: { path: emb }, options: { min_turn: 1 } }, /unknown diarization option 'min_turn'/],
    ];
    for (const [diarization, message] of cases) {
      assert.throws(() => loadDiarizationModels(modelsFile({ diarization })), message, JSON.stringify(diarization));
    }
  });
});
