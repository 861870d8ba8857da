// An operator's diarization models brought in through SORI_MODELS_FILE (docs/diarization.md, "Bring your own
// models") run through `sori serve`: random-weight ONNX models of other shapes than segmentation-3.0 and CAM++
// (engine/tests/diarization_shapes.py: 8 kHz audio, 5 s chunks, 2 local speakers; 64-bin fbank, 48-wide
// embeddings) diarize a job. Their output is noise, so the test asserts what holds whoever spoke; and a model that
// does not fit stops the start with an error naming it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const CLIP = "multi/deeply_ko_dialogue_constructed.wav"; // 69 s, two speakers

interface Utterance {
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
}

/** The random models in `dir`, and a models file naming them under `diarization` (the ASR entries built in). */
function diarizationModelsFile(dir: string, diarization: (models: string) => unknown): string {
  const r = spawnSync(path.join(ROOT, ".venv", "bin", "python"), [
    path.join(ROOT, "engine", "tests", "diarization_shapes.py"),
    path.join(dir, "models"),
  ]);
  if (r.status !== 0) throw new Error(`building the models failed: ${r.stderr}`);
  const file = path.join(dir, "models.json");
  fs.writeFileSync(file, JSON.stringify({ diarization: diarization("models") }));
  return file;
}

describe("end to end: an operator's diarization models", { timeout: 600_000 }, () => {
  let sori: SoriProcess;
  let token: string;
  let dataDir: string;

  before(async () => {
    dataDir = tempDataDir();
    const env = {
      SORI_DATA_DIR: dataDir,
      SORI_PORT: "0",
      SORI_POLL_MS: "200",
      SORI_MODELS_FILE: diarizationModelsFile(dataDir, (m) => ({
        segmentation: { path: `${m}/segmentation.onnx`, sample_rate: 8000 },
        embedding: { path: `${m}/embedding.onnx` },
      })),
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(() => sori?.stop());

  for (const spkCount of [2, 0]) {
    it(`a job with use_diarization (spk_count ${spkCount}) completes on them, its speakers numbered from 0`, async (t) => {
      const r = await submit(sori.url, token, path.join(TESTDATA, CLIP), {
        model_name: "whisper",
        language: "ko",
        use_diarization: true,
        diarization: { spk_count: spkCount },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const body = await waitFinal(sori.url, token, String(r.body.id), 300_000);
      assert.equal(body.status, "completed", JSON.stringify(body));
      const utterances = body.results.utterances as Utterance[];
      const speakers = [...new Set(utterances.map((u) => u.spk))].sort();
      t.diagnostic(`${utterances.length} utterances, speakers ${speakers}`);
      assert.ok(utterances.length > 3);
      for (const u of utterances) assert.ok(u.start_at + u.duration <= 70_000 && Number.isInteger(u.spk));
      assert.deepEqual(
        speakers,
        speakers.map((_, i) => i),
      );
      if (spkCount > 0) assert.ok(speakers.length <= spkCount);
    });
  }

  it("a model that does not fit stops the start, naming the model and why", async () => {
    const dir = tempDataDir();
    const env = {
      SORI_DATA_DIR: dir,
      SORI_PORT: "0",
      // the segmentation model where the embedding model belongs: it takes audio chunks, not fbank frames
      SORI_MODELS_FILE: diarizationModelsFile(dir, (m) => ({
        embedding: { path: `${m}/segmentation.onnx`, sample_rate: 8000 },
      })),
    };
    await assert.rejects(startSori("serve", env), /diarization embedding model input must be/);
  });
});
