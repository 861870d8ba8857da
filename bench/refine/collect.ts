// The engine's side of the refinement benchmark, cached so that every rule is judged on the same decodes: each file
// of a part (bench/refine/parts.py) is transcribed with the default options (runPipeline, as a worker does), then
// the engine's `refine` op decodes every utterance's span with CANDIDATE_DECODES and scores each text. One JSON per
// part under the cache folder; bench/refine-rules.ts reads them.
import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../../src/config.js";
import { type JobConfig, parseJobConfig } from "../../src/domain/jobConfig.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { Engine } from "../../src/engine/client.js";
import { loadModelRegistry } from "../../src/engine/models.js";
import type { RefineDecode, RefineResult } from "../../src/engine/refineProtocol.js";
import { runPipeline } from "../../src/pipeline/run.js";
import { refineParams, refinerFromConfig } from "../../src/refine/refiner.js";
import { clips } from "../../test/helpers/cer.js";
import { treeCpuS } from "../procCpu.js";

/** Every decode a candidate rule may read: the earlier default (the 5 best of a beam-5 search) first, then greedy,
 * then beam 5 with the previous utterance as the decoder's prompt. */
export const CANDIDATE_DECODES: RefineDecode[] = [
  { beam_size: 5, patience: 1, prompt_previous: false, num_hypotheses: 5 },
  { beam_size: 1, patience: 1, prompt_previous: false },
  { beam_size: 5, patience: 1, prompt_previous: true },
];

export interface FileRun {
  file: string;
  ref: string;
  seconds: number;
  utterances: Utterance[];
  raw: RefineResult;
}
export interface PartRun {
  part: string;
  lang: string;
  files: FileRun[];
  cpu: { base: number; refine: number };
}

const procCpuS = (pid: number | undefined): number => (pid === undefined ? 0 : treeCpuS(pid));

export const jobConfigOf = (lang: string): JobConfig =>
  parseJobConfig(JSON.stringify({ language: lang, use_refinement: true }));

export async function collect(partDir: string, lang: string, cacheFile: string): Promise<PartRun> {
  if (fs.existsSync(cacheFile)) return JSON.parse(fs.readFileSync(cacheFile, "utf8")) as PartRun;
  const config = loadConfig();
  const models = loadModelRegistry(config.modelsDir, config.modelsFile);
  const engine = new Engine({ python: config.python });
  const settings = { ...refinerFromConfig(config)!, decodes: CANDIDATE_DECODES };
  const run: PartRun = { part: path.basename(partDir), lang, files: [], cpu: { base: 0, refine: 0 } };
  try {
    for (const row of clips(partDir, [lang])) {
      const jobConfig = jobConfigOf(lang);
      const audioPath = path.join(partDir, row.file);
      const c0 = procCpuS(engine.pid);
      const results = await runPipeline(
        { config: jobConfig, audioPath, maxAudioS: config.maxAudioS },
        { engine, models, timeoutFactor: 20 },
        null,
      );
      const c1 = procCpuS(engine.pid);
      const deps = { engine, settings, maxAudioS: config.maxAudioS, timeoutMs: 1_200_000 };
      const raw = results.utterances.length
        ? await engine.refine(refineParams(results.utterances, jobConfig, audioPath, deps), { timeoutMs: 1_200_000 })
        : { spans: [] };
      run.cpu.base += c1 - c0;
      run.cpu.refine += procCpuS(engine.pid) - c1;
      const seconds = (await engine.probe(audioPath)).duration_s ?? 0;
      run.files.push({ file: row.file, ref: row.ref, seconds, utterances: results.utterances, raw });
      process.stderr.write(`${run.part}/${row.file}: ${results.utterances.length} utterances\n`);
    }
  } finally {
    await engine.stop();
  }
  fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
  fs.writeFileSync(cacheFile, JSON.stringify(run));
  return run;
}
