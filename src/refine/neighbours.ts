// A re-decoded span is padded by 0.3 s on each side, so its decode can take in the edge of a neighbouring
// utterance's speech ("Mr." / "Quilter is …" re-decoded as "Mr. Quilter is …"; "… on Zoom" / "the results …" as
// "Zoom, the results …"). Such a hypothesis explains the padded audio better and would win, doubling the word.
// Padding less was measured and is worse (whisper invents text on spans cut short), so hypotheses that add, at an
// edge, exactly what the neighbour says at that edge are refused instead. Compared on letters and digits only
// (case, spaces and punctuation ignored), so it works for unspaced Japanese too.

const norm = (s: string): string =>
  s
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, "");

const MAX_EDGE = 12; // characters a 0.3 s pad can hold, with room
const PROBE = 4; // characters of the current text that must follow (or precede) the added edge

/** Whether `hypothesis` adds before (after) the current text what the previous (next) utterance ends (starts) with. */
export function takesNeighbourWords(
  hypothesis: string,
  current: string,
  previous: string | null,
  next: string | null,
): boolean {
  const [h, c] = [norm(hypothesis), norm(current)];
  if (c.length === 0) return false;
  const m = Math.min(PROBE, c.length);
  const [head, tail] = [c.slice(0, m), c.slice(-m)];
  const p = previous ? norm(previous) : "";
  const n = next ? norm(next) : "";
  for (let k = 1; k <= Math.min(MAX_EDGE, h.length - m); k++) {
    if (p && !h.startsWith(head) && h.slice(k).startsWith(head) && p.endsWith(h.slice(0, k))) return true;
    if (n && !h.endsWith(tail) && h.slice(0, -k).endsWith(tail) && n.startsWith(h.slice(-k))) return true;
  }
  return false;
}
