// Accuracy of the whole pipeline (engine + text options) on ../shared/testdata, per language, through the same
// runPipeline a worker calls. Prints two CERs per language, corpus level (sum of edits / sum of reference length):
//
//   exact       characters as written, spaces and punctuation counted (NFC, runs of whitespace as one space), as
//               RTZR's public evaluation scores: a digit where the reference spells a number is an error.
//   normalized  NFKC, lower case, numbers verbalized on both sides (the reverse ITN, so "20일" = "이십 일"), then
//               punctuation, symbols and spaces removed.
//
// With --keywords it also measures keyword boosting: proper nouns of the references (KEYWORDS below) are given as
// `keywords` to every file of their language, and keyword recall (reference occurrences found in the transcript)
// and CER are printed without and with them.
//
//   nice -n 19 npx tsx bench/accuracy.ts                      # ko, ja, en with the default options
//   nice -n 19 npx tsx bench/accuracy.ts --langs ko --keywords --config '{"use_itn": false}'
//   nice -n 19 npx tsx bench/accuracy.ts --langs ko --narrowband --config '{"domain": "CALL"}'
//
// --no-hotwords keeps the keywords away from the decoder, to measure the post-correction alone.
// --narrowband transcribes 8 kHz mono copies of the files (bench/narrowband.py, in a scratch folder) instead: the
// telephone band, to measure the CALL domain.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { parseJobConfig } from "../src/domain/jobConfig.js";
import { Engine } from "../src/engine/client.js";
import { loadModelRegistry } from "../src/engine/models.js";
import { runPipeline } from "../src/pipeline/run.js";
import { levenshtein } from "../src/text/editDistance.js";
import { runOnString } from "../src/text/edits.js";
import { itnEdits } from "../src/text/itn.js";
import { ROOT, TESTDATA } from "./paths.js";

/** Proper nouns and rare words taken from the shared references, per language. */
export const KEYWORDS: Record<string, string[]> = {
  ko: ["삼계탕", "백화점", "맥거핀", "모범 답안", "필기시험", "임원 회의", "양아치", "서울"],
  ja: ["ヤンバルクイナ", "ブランコ", "ヘンゼル", "フリーダ", "気象庁", "興行主", "H2A"],
  en: ["Quilter", "TeamViewer", "Zoom", "Americans", "COVID-19", "subscriber churn"],
};

const { values: args } = parseArgs({
  options: {
    langs: { type: "string", default: "ko,ja,en" },
    "max-files": { type: "string" },
    keywords: { type: "boolean", default: false },
    config: { type: "string", default: "{}" },
    narrowband: { type: "boolean", default: false },
    "no-hotwords": { type: "boolean", default: false },
  },
});

const exactForm = (s: string): string[] => [...s.normalize("NFC").replace(/\s+/gu, " ").trim()];
const normalForm = (s: string, lang: string): string[] => {
  const spoken = runOnString(s.normalize("NFKC"), (t) => itnEdits(t, lang, false));
  return [...spoken.toLowerCase().replace(/[\p{P}\p{S}\s]/gu, "")];
};

interface Row {
  file: string;
  lang: string;
  ref: string;
}

function rows(langs: string[]): Row[] {
  const lines = fs.readFileSync(path.join(TESTDATA, "MANIFEST.tsv"), "utf8").split("\n").slice(1);
  const out: Row[] = [];
  for (const line of lines) {
    const [file, lang, , , , ref] = line.split("\t");
    if (!file || !lang || !ref || !langs.includes(lang) || !file.startsWith(`${lang}/`)) continue;
    out.push({ file, lang, ref });
  }
  return out;
}

interface Score {
  exactEdits: number;
  exactLen: number;
  normEdits: number;
  normLen: number;
  kwHits: number;
  kwTotal: number;
}

const zero = (): Score => ({ exactEdits: 0, exactLen: 0, normEdits: 0, normLen: 0, kwHits: 0, kwTotal: 0 });

async function main(): Promise<void> {
  const config = loadConfig();
  const models = loadModelRegistry(config.modelsDir, config.modelsFile);
  const engine = new Engine({ python: config.python });
  const decoder = args["no-hotwords"]
    ? ({ transcribe: (p, o) => engine.transcribe({ ...p, hotwords: null }, o) } as Pick<Engine, "transcribe"> as Engine)
    : engine;
  const extra = JSON.parse(args.config!) as Record<string, unknown>;
  const langs = args.langs!.split(",");
  const max = args["max-files"] ? Number(args["max-files"]) : Infinity;
  const modes = args.keywords ? ["without", "with"] : ["default"];
  const scores = new Map<string, Score>();
  let audioDir = TESTDATA;
  if (args.narrowband) {
    audioDir = path.join(os.tmpdir(), "sori-narrowband");
    const files = langs.flatMap((l) =>
      rows([l])
        .slice(0, max)
        .map((r) => r.file),
    );
    execFileSync(config.python, [path.join(ROOT, "bench", "narrowband.py"), audioDir, ...files], { stdio: "inherit" });
  }
  try {
    for (const lang of langs) {
      const files = rows([lang]).slice(0, max);
      for (const row of files) {
        for (const mode of modes) {
          // Each file through the RTZR-style config a client sends: sommers for ko/ja (its only languages), and
          // whisper with the language for any other, e.g. {"model_name":"whisper","language":"en"}.
          const base = lang === "ko" || lang === "ja" ? { language: lang } : { model_name: "whisper", language: lang };
          const keywords = mode === "with" ? { keywords: KEYWORDS[lang] ?? [] } : {};
          const jobConfig = parseJobConfig(JSON.stringify({ ...base, ...extra, ...keywords }));
          const t0 = Date.now();
          const results = await runPipeline(
            { config: jobConfig, audioPath: path.join(audioDir, row.file), maxAudioS: config.maxAudioS },
            { engine: decoder, models, timeoutFactor: config.engineTimeoutFactor },
            null,
          );
          const hyp = results.utterances.map((u) => u.msg).join(lang === "ja" ? "" : " ");
          const s = scores.get(`${lang} ${mode}`) ?? zero();
          const [eh, er] = [exactForm(hyp), exactForm(row.ref)];
          const [nh, nr] = [normalForm(hyp, lang), normalForm(row.ref, lang)];
          s.exactEdits += levenshtein(eh, er);
          s.exactLen += er.length;
          s.normEdits += levenshtein(nh, nr);
          s.normLen += nr.length;
          for (const k of KEYWORDS[lang] ?? []) {
            if (!row.ref.includes(k)) continue;
            s.kwTotal++;
            if (hyp.toLowerCase().includes(k.toLowerCase())) s.kwHits++;
          }
          scores.set(`${lang} ${mode}`, s);
          process.stderr.write(
            `${mode.padEnd(8)} ${row.file} (${Date.now() - t0} ms)\n  ref: ${row.ref}\n  hyp: ${hyp}\n`,
          );
        }
      }
    }
  } finally {
    await engine.stop();
  }
  const notes = [
    args.narrowband ? "8 kHz copies" : "",
    args["no-hotwords"] ? "keywords not given to the decoder" : "",
  ].filter(Boolean);
  console.log(
    `options: ${JSON.stringify(extra)} (defaults otherwise; ko, ja with sommers; other languages with {"model_name":"whisper","language":LANG})${notes.map((n) => `, ${n}`).join("")}`,
  );
  console.log("lang  mode      exact CER  normalized CER  keyword recall");
  for (const [key, s] of scores) {
    const [lang, mode] = key.split(" ");
    const recall = s.kwTotal ? `${s.kwHits}/${s.kwTotal} = ${(s.kwHits / s.kwTotal).toFixed(2)}` : "-";
    console.log(
      `${lang!.padEnd(5)} ${mode!.padEnd(9)} ${(s.exactEdits / s.exactLen).toFixed(3).padStart(9)}  ${(s.normEdits / s.normLen).toFixed(3).padStart(14)}  ${recall}`,
    );
  }
}

await main();
