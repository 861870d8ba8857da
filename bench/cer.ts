// CER of a transcript against its reference, as bench/enterprise.ts and bench/refine-llm.ts report it: exact
// (spaces and punctuation counted) and normalized (NFKC, numbers verbalized, punctuation and spaces removed),
// corpus level and as the mean of per-file rates; and the ko/ja rows of ../shared/testdata/MANIFEST.tsv.
import fs from "node:fs";
import path from "node:path";
import { levenshtein } from "../src/text/editDistance.js";
import { runOnString } from "../src/text/edits.js";
import { itnEdits } from "../src/text/itn.js";

export const exactForm = (s: string): string[] => [...s.normalize("NFC").replace(/\s+/gu, " ").trim()];
export const normalForm = (s: string, lang: string): string[] => {
  const spoken = runOnString(s.normalize("NFKC"), (t) => itnEdits(t, lang, false));
  return [...spoken.toLowerCase().replace(/[\p{P}\p{S}\s]/gu, "")];
};

export function manifest(testdata: string, langs: string[]): { file: string; lang: string; ref: string }[] {
  const lines = fs.readFileSync(path.join(testdata, "MANIFEST.tsv"), "utf8").split("\n").slice(1);
  const out = [];
  for (const line of lines) {
    const [file, lang, , , , ref] = line.split("\t");
    if (file && lang && ref && langs.includes(lang) && file.startsWith(`${lang}/`)) out.push({ file, lang, ref });
  }
  return out;
}

export class Tally {
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

/** Normalized edit distance of one hypothesis (for counting files made better or worse). */
export const normalEdits = (hyp: string, ref: string, lang: string): number =>
  levenshtein(normalForm(hyp, lang), normalForm(ref, lang));
