// How much of a summary is copied verbatim from the transcript: the longest run of characters (spaces and
// punctuation ignored) that appears in both. A summary that is mostly one copied span does not condense.

const letters = (s: string): string =>
  s
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\p{P}\p{S}\s]/gu, "");

/** Length of the longest common substring of a and b, in characters, after dropping spaces and punctuation. */
export function longestCopiedSpan(summary: string, transcript: string): number {
  const a = [...letters(summary)];
  const b = [...letters(transcript)];
  let best = 0;
  let prev = new Uint16Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Uint16Array(b.length + 1);
    for (let j = 1; j <= b.length; j++) {
      if (a[i - 1] === b[j - 1]) {
        cur[j] = prev[j - 1]! + 1;
        if (cur[j]! > best) best = cur[j]!;
      }
    }
    prev = cur;
  }
  return best;
}

/** Share of the summary's characters (spaces and punctuation ignored) in its longest verbatim copy: 0..1. */
export function copyRate(summary: string, transcript: string): number {
  const n = [...letters(summary)].length;
  return n === 0 ? 0 : longestCopiedSpan(summary, transcript) / n;
}
