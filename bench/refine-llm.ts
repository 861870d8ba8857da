// Refinement where the LLM proposes and the acoustic model decides (docs/enterprise.md): every ko and ja
// file of ../shared/testdata is transcribed with the default options (runPipeline); for each utterance the insight
// model (the embedded GGUF, through node-llama-cpp) is shown the utterance with its neighbours and asked for the
// same line with recognition errors fixed; a proposal that differs is scored by the engine's `refine` op on the
// utterance's audio (decodes [] : teacher-forced mean token log-probability of the current text and of the
// proposal, by whisper), and replaces the text only when it scores at least `margin` better and is about as long
// (select.ts). Each --margins value is evaluated on the same proposals and scores. Prints base -> refined CER per
// language (bench/cer.ts), how many utterances changed, and how many files got better or worse.
//
//   nice -n 10 npx tsx bench/refine-llm.ts --langs ko,ja --max-files 10 --margins 0,0.05,0.1 --threads 1
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaChatSession, LlamaLogLevel } from "node-llama-cpp";
import { loadConfig } from "../src/config.js";
import { parseJobConfig } from "../src/domain/jobConfig.js";
import { Engine } from "../src/engine/client.js";
import { loadModelRegistry } from "../src/engine/models.js";
import { languageName } from "../src/insight/prompt.js";
import { runPipeline } from "../src/pipeline/run.js";
import { applyRefinement, refineParams, refinerFromConfig } from "../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../src/refine/select.js";
import { manifest, normalEdits, Tally } from "./cer.js";
import { ROOT, TESTDATA } from "./paths.js";

const { values: args } = parseArgs({
  options: {
    langs: { type: "string", default: "ko,ja" },
    "max-files": { type: "string", default: "10" },
    margins: { type: "string", default: "0,0.05,0.1" },
    threads: { type: "string", default: "1" },
    model: { type: "string" },
  },
});

const SYSTEM = [
  'You correct speech-recognition errors in one line of a transcript. Answer with JSON only: {"text": the corrected line}.',
  "- The line was written by a speech recognizer and may contain misheard words: words that sound like what was said but make no sense here, words split or merged wrongly, wrong kana or kanji, misspelled names. Replace each such word with what was most likely said.",
  "- Use the neighbouring lines only as context; correct the line marked >>> only.",
  "- Keep every word that makes sense exactly as it is (wording, endings, numbers). If nothing is wrong, return the line unchanged.",
].join("\n");

const cpuS = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const config = loadConfig();
const models = loadModelRegistry(config.modelsDir, config.modelsFile);
const engine = new Engine({ python: config.python });
const settings = refinerFromConfig(config)!;
const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model ?? config.insight.modelPath });
const context = await model.createContext({ contextSize: 2048, threads: Number(args.threads), batchSize: 64 });
const sequence = context.getSequence();
const margins = args.margins!.split(",").map(Number);
let llmCpu = 0;
let llmCalls = 0;

async function propose(lines: string[], i: number, lang: string): Promise<string> {
  const grammar = await llama.createGrammarForJsonSchema({
    type: "object",
    properties: { text: { type: "string", minLength: 1, maxLength: Math.ceil(lines[i]!.length * 1.5) + 10 } },
    required: ["text"],
    additionalProperties: false,
  } as const);
  const shown = lines.map((l, j) => (j === i ? `>>> ${l}` : `    ${l}`)).slice(Math.max(0, i - 2), i + 3);
  const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false, systemPrompt: SYSTEM });
  const c0 = cpuS();
  try {
    const raw = await session.prompt(`Language: ${languageName(lang)}\nTranscript:\n${shown.join("\n")}`, {
      grammar,
      maxTokens: 200,
      temperature: 0,
    });
    return String((JSON.parse(raw) as { text: string }).text).trim();
  } catch {
    return lines[i]!;
  } finally {
    llmCpu += cpuS() - c0;
    llmCalls++;
    session.dispose();
  }
}

try {
  for (const lang of args.langs!.split(",")) {
    const rows = manifest(TESTDATA, [lang]).slice(0, Number(args["max-files"]));
    const base = new Tally();
    const refined = new Map(margins.map((m) => [m, { tally: new Tally(), changed: 0, better: 0, worse: 0 }]));
    let [utterances, proposed] = [0, 0];
    const joiner = lang === "ja" ? "" : " ";
    for (const row of rows) {
      const jobConfig = parseJobConfig(JSON.stringify({ language: lang, use_refinement: true }));
      const audioPath = path.join(TESTDATA, row.file);
      const results = await runPipeline(
        { config: jobConfig, audioPath, maxAudioS: config.maxAudioS },
        { engine, models, timeoutFactor: 10 },
        null,
      );
      const lines = results.utterances.map((u) => u.msg);
      utterances += lines.length;
      const proposals: string[] = [];
      for (let i = 0; i < lines.length; i++) proposals.push(await propose(lines, i, lang));
      const deps = { engine, settings: { ...settings, decodes: [] }, maxAudioS: config.maxAudioS, timeoutMs: 600_000 };
      const params = refineParams(results.utterances, jobConfig, audioPath, deps);
      params.spans.forEach((s, i) => {
        if (proposals[i] !== lines[i]) s.candidates = [proposals[i]!];
      });
      proposed += proposals.filter((p, i) => p !== lines[i]).length;
      const raw = lines.length ? await engine.refine(params, { timeoutMs: 600_000 }) : { spans: [] };
      const baseText = lines.join(joiner);
      base.add(baseText, row.ref, lang);
      const baseEdits = normalEdits(baseText, row.ref, lang);
      process.stderr.write(`${row.file}\n  ref:  ${row.ref}\n  base: ${baseText}\n`);
      raw.spans.forEach((s, i) => {
        const h = s.hypotheses[0];
        if (h) process.stderr.write(`  llm:  ${h.text}  (score ${h.score} vs ${s.current_score})\n`);
        else if (proposals[i] === lines[i]) process.stderr.write(`  llm:  (unchanged)\n`);
      });
      for (const m of margins) {
        const r = applyRefinement(
          results.utterances,
          raw,
          jobConfig,
          { languages: null, agree: null, select: { ...DEFAULT_SELECT, margin: m, minVotes: 0 } },
          0,
        );
        const text = r.utterances.map((u) => u.msg).join(joiner);
        const v = refined.get(m)!;
        v.tally.add(text, row.ref, lang);
        v.changed += r.changed;
        const e = normalEdits(text, row.ref, lang);
        if (e < baseEdits) v.better++;
        if (e > baseEdits) v.worse++;
      }
    }
    console.log(
      `refinement by LLM proposals, ${lang}: ${rows.length} files, ${utterances} utterances, ${proposed} proposals that differ`,
    );
    console.log(`  base                 ${base.line()}`);
    for (const [m, v] of refined) {
      console.log(
        `  accepted at margin ${m}: ${v.tally.line()}; ${v.changed} utterances changed, files better ${v.better} / worse ${v.worse}`,
      );
    }
  }
  console.log(
    `LLM: ${llmCalls} proposals, ${(llmCpu / Math.max(1, llmCalls)).toFixed(1)} s CPU each; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  await engine.stop();
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}
