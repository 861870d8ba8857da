// Edit distance between two sequences (characters, jamo, words): the one Levenshtein of the tree, used by keyword
// correction and by the error rates of the tests and benchmarks.

/** Insertions, deletions and substitutions that turn `a` into `b` (two-row dynamic programme). */
export function levenshtein(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
