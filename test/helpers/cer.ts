// Character error rate, for checking transcripts against references.
import fs from "node:fs";

export function levenshtein(a: string[], b: string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Normalized CER: NFKC, lower case, punctuation and whitespace removed. */
export function normalizedCer(hyp: string, ref: string): number {
  const norm = (s: string) => [...s.normalize("NFKC").toLowerCase().replace(/[\p{P}\p{S}\s]/gu, "")];
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

