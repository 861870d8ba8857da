// The one normal form of transcripts and the error rates over it, on the TypeScript side (the tests' assertions,
// the benches' CER): the twin of engine/sori_eval/scoring.py, which states the form and why. Both pass
// test/fixtures/scoring-vectors.json (test/unit/scoring.unit.test.ts, engine/tests/test_scoring.py), so they cannot
// drift. In short: NFKC; speaker tags dropped; lower case; for ko, ja and en numbers written in digits read out
// (`20` -> `이십` / `二十` / `twenty`, `%` -> `퍼센트` / `パーセント` / `percent`); apostrophes dropped; every
// character but letters, marks and digits a word break. CER counts the words' characters joined.
import fs from "node:fs";
import path from "node:path";
import { levenshtein } from "../../src/text/editDistance.js";
import { TESTDATA } from "./paths.js";

const SPEAKER_TAG = /\[spk\w*\]/giu;
const NUMBER = /[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?/g;
const EN_ORDINAL = /([0-9]+)(st|nd|rd|th)\b/g;
const PERCENT: Record<string, string> = { ko: "퍼센트", ja: "パーセント", en: "percent" };
const POINT: Record<string, string> = { ko: "점", ja: "点", en: "point" };

const KO_DIGITS = ["영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"];
const JA_DIGITS = ["零", "一", "二", "三", "四", "五", "六", "七", "八", "九"];
// biome-ignore format: a table
const EN_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
  "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"];
const EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
// biome-ignore format: a table
const EN_ORDINALS: Record<string, string> = { one: "first", two: "second", three: "third", five: "fifth",
  eight: "eighth", nine: "ninth", twelve: "twelfth" };

/** Sino-Korean and Japanese readings by groups of 10^4; a 1 before 천/千, 백/百, 십/十 is not said, before 만 only
 * in Japanese (一万, 만). */
function myriads(v: number, digits: string[], small: string[], big: string[], oneBeforeMan: boolean): string {
  const section = (n: number): string => {
    let out = "";
    for (const [i, size] of [1000, 100, 10].entries()) {
      const q = Math.floor(n / size);
      n %= size;
      if (q) out += (q === 1 ? "" : digits[q]!) + small[i]!;
    }
    return out + (n ? digits[n] : "");
  };
  if (v === 0) return digits[0]!;
  let out = "";
  let rest = v;
  for (const [i, size] of [1e12, 1e8, 1e4].entries()) {
    const q = Math.floor(rest / size);
    rest %= size;
    if (q) out += (q === 1 && size === 1e4 && !oneBeforeMan ? "" : section(q)) + big[i];
  }
  return out + section(rest);
}

function english(v: number): string {
  if (v < 20) return EN_ONES[v]!;
  if (v < 100) return EN_TENS[Math.floor(v / 10)]! + (v % 10 ? ` ${EN_ONES[v % 10]}` : "");
  if (v < 1000) return `${EN_ONES[Math.floor(v / 100)]} hundred${v % 100 ? ` ${english(v % 100)}` : ""}`;
  for (const [word, size] of [
    ["trillion", 1e12],
    ["billion", 1e9],
    ["million", 1e6],
    ["thousand", 1e3],
  ] as const) {
    if (v >= size) return `${english(Math.floor(v / size))} ${word}${v % size ? ` ${english(v % size)}` : ""}`;
  }
  throw new Error(String(v));
}

const digitWords = (lang: string): string[] => (lang === "ko" ? KO_DIGITS : lang === "ja" ? JA_DIGITS : EN_ONES);

/** The reading of a run of ASCII digits in ko, ja or en (leading zero or over 15 digits: digit by digit). */
export function readInteger(digits: string, lang: string): string {
  if ((digits.length > 1 && digits[0] === "0") || digits.length > 15)
    return [...digits].map((d) => digitWords(lang)[Number(d)]).join(" ");
  const v = Number(digits);
  if (lang === "ko") return myriads(v, KO_DIGITS, ["천", "백", "십"], ["조", "억", "만"], false);
  if (lang === "ja") return myriads(v, JA_DIGITS, ["千", "百", "十"], ["兆", "億", "万"], true);
  return english(v);
}

function readNumber(written: string, lang: string): string {
  const [whole, frac] = written.replaceAll(",", "").split(".");
  let out = readInteger(whole!, lang);
  if (frac) out += ` ${POINT[lang]} ${[...frac].map((d) => digitWords(lang)[Number(d)]).join(" ")}`;
  return out;
}

function ordinal(_m: string, digits: string): string {
  const ws = readInteger(digits, "en").split(" ");
  let last = ws.pop()!;
  if (last in EN_ORDINALS) last = EN_ORDINALS[last]!;
  else if (last.endsWith("y")) last = `${last.slice(0, -1)}ieth`;
  else last += "th";
  return ` ${[...ws, last].join(" ")} `;
}

/** The normal form's words of `text` in `lang` ("" or a language without readings: digits kept). */
export function words(text: string, lang = ""): string[] {
  let t = text.normalize("NFKC").replace(SPEAKER_TAG, " ").toLowerCase();
  if (lang in PERCENT) {
    if (lang === "en") t = t.replace(EN_ORDINAL, ordinal);
    t = t.replace(NUMBER, (m) => ` ${readNumber(m, lang)} `).replaceAll("%", ` ${PERCENT[lang]} `);
  }
  t = t.replace(/['\u2019]/gu, "").replace(/[^\p{L}\p{M}\p{N}]/gu, " ");
  return t.split(" ").filter(Boolean);
}

/** The normal form's characters (code points): the words joined. */
export const chars = (text: string, lang = ""): string[] => [...words(text, lang).join("")];

/** Normalized character error rate: edits over the reference's characters ("" for lang: digits kept as digits). */
export function normalizedCer(hyp: string, ref: string, lang = ""): number {
  const r = chars(ref, lang);
  return levenshtein(chars(hyp, lang), r) / Math.max(1, r.length);
}

/** Word error rate over the normal form's words. */
export function wer(hyp: string, ref: string, lang = ""): number {
  const r = words(ref, lang);
  return levenshtein(words(hyp, lang), r) / Math.max(1, r.length);
}

/** The form RTZR's public evaluation scores: characters as written (NFC, runs of whitespace as one space). */
export const exactChars = (s: string): string[] => [...s.normalize("NFC").replace(/\s+/gu, " ").trim()];

/** Corpus-level rates over many files (summed edits over summed reference characters), normalized and exact, and
 * the mean of the per-file rates. */
export class Tally {
  norm = [0, 0];
  exact = [0, 0];
  fileNorm: number[] = [];
  fileExact: number[] = [];
  /** Counts one file; returns its normalized edits. */
  add(hyp: string, ref: string, lang: string): number {
    const [nh, nr] = [chars(hyp, lang), chars(ref, lang)];
    const [eh, er] = [exactChars(hyp), exactChars(ref)];
    const [n, e] = [levenshtein(nh, nr), levenshtein(eh, er)];
    this.norm[0]! += n;
    this.norm[1]! += nr.length;
    this.exact[0]! += e;
    this.exact[1]! += er.length;
    this.fileNorm.push(n / Math.max(1, nr.length));
    this.fileExact.push(e / Math.max(1, er.length));
    return n;
  }
  get cer(): number {
    return this.norm[0]! / Math.max(1, this.norm[1]!);
  }
  line(): string {
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const rate = ([e, n]: number[]): string => `${(e! / Math.max(1, n!)).toFixed(3)} [${e}/${n}]`;
    return `exact ${rate(this.exact)} (file mean ${mean(this.fileExact).toFixed(3)})  normalized ${rate(this.norm)} (file mean ${mean(this.fileNorm).toFixed(3)})`;
  }
}

/** Normalized edits of one hypothesis (for counting files made better or worse). */
export const normalEdits = (hyp: string, ref: string, lang: string): number =>
  levenshtein(chars(hyp, lang), chars(ref, lang));

/** A row of ../shared/testdata/MANIFEST.tsv (local_file, lang, repo, path, license, transcript): the one reader. */
export interface Clip {
  file: string;
  lang: string;
  ref: string;
}

function rows(testdata: string): Clip[] {
  const lines = fs.readFileSync(path.join(testdata, "MANIFEST.tsv"), "utf8").split("\n").slice(1);
  return lines
    .map((line) => line.split("\t"))
    .filter((cols) => cols.length >= 6)
    .map((cols) => ({ file: cols[0]!, lang: cols[1]!, ref: cols[5]! }));
}

/** The references by file. */
export const manifest = (testdata = TESTDATA): Map<string, string> =>
  new Map(rows(testdata).map((c) => [c.file, c.ref]));

/** The clips with a reference in the folders `<lang>/` of `langs`, in the manifest's order, language by language. */
export const clips = (testdata: string, langs: string[]): Clip[] =>
  langs.flatMap((lang) => rows(testdata).filter((c) => c.ref && c.file.startsWith(`${lang}/`)));

/**
 * What a real-model test asserts about the model's words on any CPU (test/README.md): the text is the reference's
 * sentence within a CER bound, never an exact word (the same int8 model spells words differently by CPU).
 */
export function assertResembles(hyp: string, ref: string, maxCer: number, what = "transcript", lang = ""): void {
  const c = normalizedCer(hyp, ref, lang);
  if (!(c <= maxCer)) throw new Error(`${what}: normalized CER ${c.toFixed(3)} > ${maxCer}: ${hyp}`);
}

/** References of the shared clips the tests transcribe most (../shared/testdata/MANIFEST.tsv). */
export const REFERENCES = {
  jfk: "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.",
  leopardKo: "그는 이리저리 피하면서 길 한 옆으로 걸어갔다.",
  anechoic53: "어제 임원 회의에서 퇴근 시간을 정확하게 지키자는 이야기가 있었습니다.",
} as const;
