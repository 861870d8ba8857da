// The engine request the service would send for each job config given, so a Python bench decodes with the
// service's settings (model registry entry, domain CALL, word timestamps, prompts) instead of its own copy of them.
// bench/robustness.py runs this once at start. Each argument is a job config (JSON, as a client would send it);
// prints one JSON array of `transcribe` params, audio_path empty (the bench fills in its own files). A language the
// config's model does not take (sommers is ko/ja only: the service answers 400) gets the `whisper` entry, the one
// a user of that language has to pick; the answer's `model_name` says which entry was used.
//
//   npx tsx bench/engine-params.ts '{"model_name":"sommers","language":"ko","domain":"CALL"}' '{"language":"en"}'
import { loadConfig } from "../src/config.js";
import { InvalidInput } from "../src/domain/errors.js";
import { type JobConfig, parseJobConfig } from "../src/domain/jobConfig.js";
import { loadModelRegistry } from "../src/engine/models.js";
import { engineParams } from "../src/pipeline/run.js";

const config = loadConfig();
const models = loadModelRegistry(config.modelsDir, config.modelsFile);
function jobConfig(text: string): JobConfig {
  try {
    return parseJobConfig(text);
  } catch (error) {
    if (!(error instanceof InvalidInput)) throw error;
    return parseJobConfig(JSON.stringify({ ...JSON.parse(text), model_name: "whisper" }));
  }
}

const params = process.argv.slice(2).map((text) => {
  const job = jobConfig(text);
  return { ...engineParams(job, "", models, config.maxAudioS), model_name: job.model_name };
});
process.stdout.write(`${JSON.stringify(params)}\n`);
