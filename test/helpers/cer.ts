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
