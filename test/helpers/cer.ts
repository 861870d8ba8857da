// Character error rate, for checking transcripts against references.
import fs from "node:fs";

export { levenshtein } from "../../src/text/editDistance.js";

import { levenshtein } from "../../src/text/editDistance.js";

/** Normalized CER: NFKC, lower case, punctuation and whitespace removed. */
export function normalizedCer(hyp: string, ref: string): number {
  const norm = (s: string) => [
    ...s
      .normalize("NFKC")
      .toLowerCase()
      .replace(/[\p{P}\p{S}\s]/gu, ""),
  ];
  const r = norm(ref);
  return levenshtein(norm(hyp), r) / Math.max(1, r.length);
}

export function manifest(testdata: string): Map<string, string> {
  // MANIFEST.tsv: local_file, lang, repo, path, license, transcript
  const lines = fs.readFileSync(`${testdata}/MANIFEST.tsv`, "utf8").split("\n").slice(1);
  const out = new Map<string, string>();
  for (const line of lines) {
    const cols = line.split("\t");
    if (cols.length >= 6) out.set(cols[0]!, cols[5]!);
  }
  return out;
}

/**
 * What a real-model test asserts about the model's words on any CPU (test/README.md): the text is the reference's
 * sentence within a CER bound, never an exact word (the same int8 model spells words differently by CPU).
 */
export function assertResembles(hyp: string, ref: string, maxCer: number, what = "transcript"): void {
  const cer = normalizedCer(hyp, ref);
  if (!(cer <= maxCer)) throw new Error(`${what}: normalized CER ${cer.toFixed(3)} > ${maxCer}: ${hyp}`);
}

/** References of the shared clips the tests transcribe most (../shared/testdata/MANIFEST.tsv). */
export const REFERENCES = {
  jfk: "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.",
  leopardKo: "그는 이리저리 피하면서 길 한 옆으로 걸어갔다.",
  anechoic53: "어제 임원 회의에서 퇴근 시간을 정확하게 지키자는 이야기가 있었습니다.",
} as const;
