// The refine task's engine call on a file already transcribed, for bench/memory.py's --refine: the same
// refineUtterances call (refiner settings from the deployment's config) a worker's refine task makes.
//   node --import tsx bench/memory-refine.ts AUDIO BASE_BODY.json CONFIG_JSON
// Prints {"utterances": n, "changed": n}.
import fs from "node:fs";
import { loadConfig } from "../src/config.js";
import { parseJobConfig } from "../src/domain/jobConfig.js";
import type { Utterance } from "../src/domain/utterance.js";
import { Engine } from "../src/engine/client.js";
import { refinerFromConfig, refineUtterances } from "../src/refine/refiner.js";

const [audioPath, basePath, configJson] = process.argv.slice(2);
if (!audioPath || !basePath) throw new Error("usage: memory-refine.ts AUDIO BASE_BODY.json [CONFIG_JSON]");
const config = loadConfig();
const settings = refinerFromConfig(config);
if (!settings) throw new Error("refinement is off (SORI_REFINE=0)");
const body = JSON.parse(fs.readFileSync(basePath, "utf8")) as { results?: { utterances?: Utterance[] } };
const utterances = body.results?.utterances ?? [];
const engine = new Engine({ python: config.python });
try {
  const out = await refineUtterances(utterances, parseJobConfig(configJson ?? "{}"), audioPath, {
    engine,
    settings,
    maxAudioS: config.maxAudioS,
    timeoutMs: 6 * 3600 * 1000,
  });
  process.stdout.write(`${JSON.stringify({ utterances: out.utterances.length, changed: out.changed })}\n`);
} finally {
  await engine.stop();
}
