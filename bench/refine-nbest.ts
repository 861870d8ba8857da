// N-best rescoring refinement (docs/enterprise.md "Refinement"): every file of ../shared/testdata (first
// --max-files per language) is transcribed with the default options (runPipeline); the engine's `refine` op returns,
// per utterance, the N best texts of one beam search on its audio, each with whisper's teacher-forced mean token
// log-probability (the current text scored the same way); the LLM (the embedded GGUF, node-llama-cpp) scores each
// text's mean token log-probability after the previous utterance (and the job's keywords); nbest.ts picks
// argmax acoustic + lambda * lm. Every --lambdas x --margins pair is evaluated on the same scores. Prints, per
// language, base -> refined CER (test/helpers/cer.ts), utterances changed, files better / worse, and CPU seconds per minute
// of audio of the base pass, the N-best decode + scoring (engine process) and the LLM scoring (this process).
// The engine and LLM results are cached in --cache (delete it to measure again).
//
//   OMP_NUM_THREADS=1 nice -n 10 npx tsx bench/refine-nbest.ts --langs ko,ja,en --max-files 10 --n 5
//   (a noisy/phone set: bench/refine-degrade.py at fdf3214 --condition amr --out DIR, then --testdata DIR --tag amr)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { loadConfig } from "../src/config.js";
import { type JobConfig, parseJobConfig } from "../src/domain/jobConfig.js";
import type { Utterance } from "../src/domain/utterance.js";
import { Engine } from "../src/engine/client.js";
import { loadModelRegistry } from "../src/engine/models.js";
import type { RefineDecode, RefineResult } from "../src/engine/refineProtocol.js";
import { languageName } from "../src/insight/prompt.js";
import { runPipeline } from "../src/pipeline/run.js";
import { applyRefinement, finalText, refineParams, refinerFromConfig } from "../src/refine/refiner.js";
import { clips, normalEdits, Tally } from "../test/helpers/cer.js";
import { TESTDATA } from "../test/helpers/paths.js";
import { lmScores } from "./refine/lmScore.js";
import { DEFAULT_RESCORE, rescoreNBest, type ScoredText } from "./refine/nbest.js";

const { values: args } = parseArgs({
  options: {
    langs: { type: "string", default: "ko,ja,en" },
    "max-files": { type: "string", default: "10" },
    n: { type: "string", default: "5" },
    lambdas: { type: "string", default: "0,0.1,0.2,0.3,0.5,0.7,1" },
    margins: { type: "string", default: "0,0.05,0.1" },
    "top-k": { type: "string", default: "40" },
    threads: { type: "string", default: "1" },
    cache: { type: "string", default: "/tmp/sori-refine-nbest" },
    model: { type: "string" },
    /** Another test set laid out like ../shared/testdata (e.g. from bench/refine-degrade.py at fdf3214), and its cache tag. */
    testdata: { type: "string", default: TESTDATA },
    tag: { type: "string", default: "clean" },
    /** Other decodes than the N-best one (JSON, as the engine takes them), e.g. the earlier default; with
     * --min-votes for the select.ts line, and --no-lm to skip the LLM. Give them their own --tag. */
    decodes: { type: "string" },
    "min-votes": { type: "string", default: "1" },
    "no-lm": { type: "boolean", default: false },
    /** select.ts minUtteranceS values to report (the default's first). */
    "min-utterance-s": { type: "string", default: "1,0" },
  },
});

interface FileRun {
  file: string;
  ref: string;
  seconds: number;
  utterances: Utterance[];
  raw: RefineResult;
  /** Per utterance: the texts scored (current first, then the hypotheses, after the job's text options). */
  texts?: string[][];
  lm?: (number | null)[][];
}
interface LangRun {
  files: FileRun[];
  cpu: { base: number; nbest: number; lm: number };
}

const config = loadConfig();
const n = Number(args.n);
const cacheDir = path.join(args.cache!, `${args.tag}-n${n}`);
fs.mkdirSync(cacheDir, { recursive: true });
// As a client asks: ko and ja with the default model (sommers), other languages with whisper and the language.
const jobConfigOf = (lang: string): JobConfig =>
  parseJobConfig(
    JSON.stringify(
      lang === "ko" || lang === "ja"
        ? { language: lang, use_refinement: true }
        : { model_name: "whisper", language: lang, use_refinement: true },
    ),
  );
const cpuS = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
/** CPU seconds of another process so far (user + system), from /proc. */
const procCpuS = (pid: number | undefined): number => {
  if (pid === undefined) return 0;
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

async function acoustic(lang: string): Promise<LangRun> {
  const models = loadModelRegistry(config.modelsDir, config.modelsFile);
  const engine = new Engine({ python: config.python });
  const settings = refinerFromConfig(config)!;
  const decodes = args.decodes
    ? (JSON.parse(args.decodes) as RefineDecode[])
    : [{ beam_size: Math.max(5, n), patience: 1, prompt_previous: false, num_hypotheses: n }];
  const run: LangRun = { files: [], cpu: { base: 0, nbest: 0, lm: 0 } };
  try {
    for (const row of clips(args.testdata!, [lang]).slice(0, Number(args["max-files"]))) {
      const jobConfig = jobConfigOf(lang);
      const audioPath = path.join(args.testdata!, row.file);
      const c0 = procCpuS(engine.pid);
      const results = await runPipeline(
        { config: jobConfig, audioPath, maxAudioS: config.maxAudioS },
        { engine, models, timeoutFactor: 10 },
        null,
      );
      const c1 = procCpuS(engine.pid);
      const deps = { engine, settings: { ...settings, decodes }, maxAudioS: config.maxAudioS, timeoutMs: 600_000 };
      const raw = results.utterances.length
        ? await engine.refine(refineParams(results.utterances, jobConfig, audioPath, deps), { timeoutMs: 600_000 })
        : { spans: [] };
      run.cpu.base += c1 - c0;
      run.cpu.nbest += procCpuS(engine.pid) - c1;
      const seconds = (await engine.probe(audioPath)).duration_s ?? 0;
      run.files.push({ file: row.file, ref: row.ref, seconds, utterances: results.utterances, raw });
      process.stderr.write(`${row.file}: ${results.utterances.length} utterances\n`);
    }
  } finally {
    await engine.stop();
  }
  return run;
}

async function scoreWithLm(lang: string, run: LangRun): Promise<void> {
  const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: args.model ?? config.insight.modelPath });
  const context = await model.createContext({ contextSize: 1024, threads: Number(args.threads), batchSize: 128 });
  const sequence = context.getSequence();
  const jobConfig = jobConfigOf(lang);
  const c0 = cpuS();
  try {
    for (const f of run.files) {
      f.texts = [];
      f.lm = [];
      for (const [i, u] of f.utterances.entries()) {
        const span = f.raw.spans[i]!;
        const texts = [u.msg, ...span.hypotheses.map((h) => finalText(h.text, u, jobConfig) ?? h.text)];
        const previous = i > 0 ? `${f.utterances[i - 1]!.msg}\n` : "";
        const keywords = jobConfig.keywords?.length ? `Keywords: ${jobConfig.keywords.join(", ")}\n` : "";
        const ctx = `${keywords}Transcript of a recording in ${languageName(lang)}:\n${previous}`;
        f.texts.push(texts);
        f.lm.push(await lmScores(model, sequence, ctx, texts, { topK: Number(args["top-k"]) }));
      }
    }
  } finally {
    run.cpu.lm = cpuS() - c0;
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}

function report(lang: string, run: LangRun): void {
  const joiner = lang === "ja" ? "" : " ";
  const base = new Tally();
  const minutes = run.files.reduce((s, f) => s + f.seconds, 0) / 60;
  const utterances = run.files.reduce((s, f) => s + f.utterances.length, 0);
  const hyps = run.files.reduce((s, f) => s + f.raw.spans.reduce((t, sp) => t + sp.hypotheses.length, 0), 0);
  for (const f of run.files) base.add(f.utterances.map((u) => u.msg).join(joiner), f.ref, lang);
  console.log(
    `N-best rescoring, ${args.tag} ${lang}: ${run.files.length} files, ${utterances} utterances, ${hyps} hypotheses`,
  );
  console.log(`  base                    ${base.line()}`);
  const perMin = (s: number): string => (minutes > 0 ? (s / minutes).toFixed(0) : "?");
  console.log(
    `  CPU s per minute of audio: base ${perMin(run.cpu.base)}, N-best decode+scoring ${perMin(run.cpu.nbest)}, LLM ${perMin(run.cpu.lm)}`,
  );
  // The service's own rule (select.ts, applyRefinement) on the same engine output: the refiner.ts default when the
  // cache was made with the default decode, else select.ts with --min-votes (e.g. 2 for the earlier default).
  const service = refinerFromConfig(config)!;
  const votes = Number(args["min-votes"]);
  const decodes = args.decodes ? (JSON.parse(args.decodes) as RefineDecode[]).length : 1;
  for (const minUtteranceS of args["min-utterance-s"]!.split(",").map(Number)) {
    const tally = new Tally();
    let [changed, better, worse] = [0, 0, 0];
    for (const f of run.files) {
      const select = { ...service.rule.select, minVotes: votes, minUtteranceS };
      const r = applyRefinement(
        f.utterances,
        f.raw,
        jobConfigOf(lang),
        { languages: null, agree: null, select },
        decodes,
      );
      const [before, after] = [f.utterances, r.utterances].map((us) => us.map((u) => u.msg).join(joiner));
      tally.add(after!, f.ref, lang);
      changed += r.changed;
      const [e0, e1] = [normalEdits(before!, f.ref, lang), normalEdits(after!, f.ref, lang)];
      if (e1 < e0) better++;
      if (e1 > e0) worse++;
    }
    console.log(
      `  select.ts (margin ${service.rule.select.margin}, ${votes} vote(s), utterances from ${minUtteranceS} s): ${tally.line()}; changed ${changed}, files better ${better} / worse ${worse}`,
    );
  }
  if (!run.files[0]?.lm) return;
  for (const margin of args.margins!.split(",").map(Number)) {
    for (const lambda of args.lambdas!.split(",").map(Number)) {
      const tally = new Tally();
      let [changed, better, worse] = [0, 0, 0];
      const examples: string[] = [];
      for (const f of run.files) {
        const [textsOf, lmOf] = [f.texts ?? [], f.lm ?? []];
        const msgs = f.utterances.map((u, i) => {
          const span = f.raw.spans[i]!;
          const scored: ScoredText[] = (textsOf[i] ?? []).map((text, j) => ({
            text,
            acoustic: j === 0 ? span.current_score : (span.hypotheses[j - 1]?.score ?? null),
            lm: lmOf[i]?.[j] ?? null,
          }));
          const pick = rescoreNBest(scored[0]!, scored.slice(1), { ...DEFAULT_RESCORE, lambda, margin });
          if (!pick || pick.text === u.msg) return u.msg;
          changed++;
          if (examples.length < 4) examples.push(`${u.msg} → ${pick.text}`);
          return pick.text;
        });
        const text = msgs.join(joiner);
        tally.add(text, f.ref, lang);
        const [e0, e1] = [
          normalEdits(f.utterances.map((u) => u.msg).join(joiner), f.ref, lang),
          normalEdits(text, f.ref, lang),
        ];
        if (e1 < e0) better++;
        if (e1 > e0) worse++;
      }
      console.log(
        `  lambda ${lambda} margin ${margin}: ${tally.line()}; changed ${changed}, files better ${better} / worse ${worse}`,
      );
      for (const e of examples) console.log(`      ${e}`);
    }
  }
}

for (const lang of args.langs!.split(",")) {
  const file = path.join(cacheDir, `${lang}-${args["max-files"]}.json`);
  let run: LangRun;
  if (fs.existsSync(file)) run = JSON.parse(fs.readFileSync(file, "utf8")) as LangRun;
  else {
    run = await acoustic(lang);
    fs.writeFileSync(file, JSON.stringify(run));
  }
  if (!run.files[0]?.lm && !args["no-lm"]) {
    await scoreWithLm(lang, run);
    fs.writeFileSync(file, JSON.stringify(run));
  }
  report(lang, run);
}
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
