// What the Enterprise add-ons cost and buy (docs/enterprise.md), through the same functions a worker calls.
//
// Refinement: every ko and ja file of ../shared/testdata is transcribed with the default options (runPipeline),
// then refined (the engine's `refine` op + the selection rule); CER of base and refined text is printed per
// language, corpus level and as the mean of per-file CERs, exact (spaces and punctuation counted) and normalized
// (NFKC, numbers verbalized, punctuation and spaces removed), with the seconds refinement adds per minute of audio.
// The engine's scores are kept, so each --margins value is evaluated on the same decodes.
//
// Insight: for --insight-files, the seconds the embedded model (or SORI_INSIGHT_BASE_URL) adds per minute of audio,
// and the items it wrote.
//
//   nice -n 19 npx tsx bench/enterprise.ts                           # refinement ko,ja + insight
//   nice -n 19 npx tsx bench/enterprise.ts --langs ko --max-files 5 --no-insight
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { Engine } from "../src/engine/client.js";
import { loadModelRegistry } from "../src/engine/models.js";
import { insightBackend, insightForJob } from "../src/insight/index.js";
import { parseJobConfig } from "../src/domain/jobConfig.js";
import { runPipeline } from "../src/pipeline/run.js";
import { applyRefinement, refineParams, refinerFromConfig } from "../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../src/refine/select.js";
import { runOnString } from "../src/text/edits.js";
import { itnEdits } from "../src/text/itn.js";
import { levenshtein } from "../src/text/editDistance.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const TESTDATA = process.env.SORI_TESTDATA ? path.resolve(process.env.SORI_TESTDATA) : path.resolve(ROOT, "..", "shared", "testdata");

const { values: args } = parseArgs({
  options: {
    langs: { type: "string", default: "ko,ja" },
    "max-files": { type: "string" },
    "skip-files": { type: "string", default: "0" },
    margins: { type: "string", default: `${DEFAULT_SELECT.margin}` },
    votes: { type: "string", default: `${DEFAULT_SELECT.minVotes}` },
    "no-refine": { type: "boolean", default: false },
    "no-insight": { type: "boolean", default: false },
    "insight-files": {
      type: "string",
      default: "multi/deeply_ko_dialogue_constructed.wav,ko/deeply_studioapt_sub100102a00015.wav,en/earnings22_1_4482311_3_62.wav,en/whisper_jfk.flac",
    },
  },
});

const exactForm = (s: string): string[] => [...s.normalize("NFC").replace(/\s+/gu, " ").trim()];
const normalForm = (s: string, lang: string): string[] => {
  const spoken = runOnString(s.normalize("NFKC"), (t) => itnEdits(t, lang, false));
  return [...spoken.toLowerCase().replace(/[\p{P}\p{S}\s]/gu, "")];
};

function manifest(langs: string[]): { file: string; lang: string; ref: string }[] {
  const lines = fs.readFileSync(path.join(TESTDATA, "MANIFEST.tsv"), "utf8").split("\n").slice(1);
  const out = [];
  for (const line of lines) {
    const [file, lang, , , , ref] = line.split("\t");
    if (file && lang && ref && langs.includes(lang) && file.startsWith(`${lang}/`)) out.push({ file, lang, ref });
  }
  return out;
}

class Tally {
  exact = [0, 0];
  norm = [0, 0];
  fileNorm: number[] = [];
  fileExact: number[] = [];
  add(hyp: string, ref: string, lang: string): void {
    const [eh, er] = [exactForm(hyp), exactForm(ref)];
    const [nh, nr] = [normalForm(hyp, lang), normalForm(ref, lang)];
    const [e, n] = [levenshtein(eh, er), levenshtein(nh, nr)];
    this.exact[0]! += e;
    this.exact[1]! += er.length;
    this.norm[0]! += n;
    this.norm[1]! += nr.length;
    this.fileExact.push(e / Math.max(1, er.length));
    this.fileNorm.push(n / Math.max(1, nr.length));
  }
  line(): string {
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const rate = ([e, n]: number[]): string => `${(e! / n!).toFixed(3)} [${e}/${n}]`;
    return `exact ${rate(this.exact)} (file mean ${mean(this.fileExact).toFixed(3)})  normalized ${rate(this.norm)} (file mean ${mean(this.fileNorm).toFixed(3)})`;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const models = loadModelRegistry(config.modelsDir, config.modelsFile);
  const engine = new Engine({ python: config.python });
  const settings = refinerFromConfig(config)!;
  // Selection variants evaluated on the same decodes: every margin × every minimum number of agreeing decodes.
  const margins = args.margins!.split(",").flatMap((m) => args.votes!.split(",").map((v) => `${m}/${v}`));
  const skip = Number(args["skip-files"]);
  const max = skip + (args["max-files"] ? Number(args["max-files"]) : Infinity);
  // Lines are printed as each part finishes (a long run stopped half-way still reports what it measured).
  const out = { push: (line: string): void => console.log(line) };
  try {
    if (!args["no-refine"]) {
      for (const lang of args.langs!.split(",")) {
        const base = new Tally();
        const refined = new Map(margins.map((m) => [m, new Tally()]));
        let audioS = 0;
        let baseMs = 0;
        let refineMs = 0;
        let changed = 0;
        let utterances = 0;
        for (const row of manifest([lang]).slice(skip, max)) {
          const jobConfig = parseJobConfig(JSON.stringify({ language: lang, use_refinement: true }));
          const audioPath = path.join(TESTDATA, row.file);
          const t0 = Date.now();
          const results = await runPipeline({ config: jobConfig, audioPath, maxAudioS: config.maxAudioS }, { engine, models, timeoutFactor: 10 }, null);
          const t1 = Date.now();
          const deps = { engine, settings, maxAudioS: config.maxAudioS, timeoutMs: 600_000 };
          const raw = results.utterances.length ? await engine.refine(refineParams(results.utterances, jobConfig, audioPath, deps), { timeoutMs: 600_000 }) : { spans: [] };
          const t2 = Date.now();
          baseMs += t1 - t0;
          refineMs += t2 - t1;
          const probe = await engine.probe(audioPath);
          audioS += probe.duration_s ?? 0;
          const joiner = lang === "ja" ? "" : " ";
          const baseText = results.utterances.map((u) => u.msg).join(joiner);
          base.add(baseText, row.ref, lang);
          utterances += results.utterances.length;
          for (const m of margins) {
            const [margin, minVotes] = m.split("/").map(Number) as [number, number];
            const r = applyRefinement(results.utterances, raw, jobConfig, { ...settings.select, margin, minVotes }, settings.decodes.length);
            refined.get(m)!.add(r.utterances.map((u) => u.msg).join(joiner), row.ref, lang);
            if (m === margins[0]) {
              changed += r.changed;
              process.stderr.write(`${row.file}\n  ref:  ${row.ref}\n  base: ${baseText}\n  ref.: ${r.utterances.map((u) => u.msg).join(joiner)}\n`);
            }
          }
        }
        out.push(`refinement ${lang}: ${manifest([lang]).slice(skip, max).length} files, ${audioS.toFixed(1)} s of audio, ${changed}/${utterances} utterances changed`);
        out.push(`  base            ${base.line()}`);
        for (const [m, t] of refined) out.push(`  refined margin/votes=${m}  ${t.line()}`);
        out.push(`  time: base ${((baseMs / 1000 / audioS) * 60).toFixed(1)} s per audio minute, refinement adds ${((refineMs / 1000 / audioS) * 60).toFixed(1)} s per audio minute`);
      }
    }
    if (!args["no-insight"]) {
      const llm = insightBackend(config);
      let audioS = 0;
      let insightMs = 0;
      let first = true;
      for (const file of args["insight-files"]!.split(",")) {
        const audioPath = path.join(TESTDATA, file);
        const lang = file.startsWith("en/") ? "detect" : "ko";
        const jobConfig = parseJobConfig(JSON.stringify(lang === "detect" ? { model_name: "whisper", language: "detect", language_candidates: ["en", "ko"] } : { language: "ko" }));
        const results = await runPipeline({ config: jobConfig, audioPath, maxAudioS: config.maxAudioS }, { engine, models, timeoutFactor: 10 }, null);
        if (first) {
          // Load the model outside the timing: a worker loads it once per process.
          await insightForJob({ utterances: results.utterances.slice(0, 1), language: jobConfig.language }, llm, 600_000);
          first = false;
        }
        const t0 = Date.now();
        const r = await insightForJob({ utterances: results.utterances, language: jobConfig.language }, llm, 600_000);
        const ms = Date.now() - t0;
        const dur = (await engine.probe(audioPath)).duration_s ?? 0;
        audioS += dur;
        insightMs += ms;
        out.push(`insight ${file} (${dur.toFixed(1)} s audio, ${(ms / 1000).toFixed(1)} s): ${JSON.stringify(r.insight)}${r.error ? ` error: ${r.error}` : ""}`);
      }
      out.push(`insight (${llm.name}): adds ${((insightMs / 1000 / audioS) * 60).toFixed(1)} s per audio minute over ${audioS.toFixed(1)} s of audio (model load excluded)`);
      await llm.close();
    }
  } finally {
    await engine.stop();
  }
}

await main();
