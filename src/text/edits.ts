// The data every text stage works on: a run of timed tokens whose texts, concatenated, are the utterance's text.
// A stage looks at that text and returns edits (character spans to replace); `applyEdits` carries them back onto the
// tokens, so word times survive every stage: a replacement that covers several words becomes one word spanning
// their times, a deletion drops the words it empties.

/** A word with its separator: `text` keeps its leading space (" 그러니까"), so tokens join back into the text. */
export interface Token {
  text: string;
  start_at: number;
  duration: number;
}

/** Replace text[start, end) (end > start: no pure insertions) with `text`. Overlapping edits: the earlier wins. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export const joinTokens = (tokens: readonly Token[]): string => tokens.map((t) => t.text).join("");

/** Edits from a global regex: `replace` returns the new text for a match, or null to leave it. */
export function regexEdits(text: string, re: RegExp, replace: (m: RegExpExecArray) => string | null): Edit[] {
  const edits: Edit[] = [];
  for (const m of text.matchAll(re)) {
    const out = replace(m as RegExpExecArray);
    if (out !== null && out !== m[0]) edits.push({ start: m.index, end: m.index + m[0].length, text: out });
  }
  return edits;
}

export function applyEditsToString(text: string, edits: readonly Edit[]): string {
  let out = "";
  let at = 0;
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    if (e.start < at) continue; // overlapping: the earlier edit wins
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

export function applyEdits(tokens: readonly Token[], edits: readonly Edit[]): Token[] {
  if (edits.length === 0) return [...tokens];
  const bounds: number[] = [];
  let pos = 0;
  for (const t of tokens) {
    bounds.push(pos);
    pos += t.text.length;
  }
  // Non-overlapping edits in order, each with the tokens it touches; edits that share a token form one cluster.
  const sorted: Edit[] = [];
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    if (e.end > e.start && (sorted.length === 0 || e.start >= sorted[sorted.length - 1]!.end)) sorted.push(e);
  }
  const firstToken = (at: number): number => {
    let k = 0;
    while (k + 1 < tokens.length && bounds[k + 1]! <= at) k++;
    return k;
  };
  const lastToken = (end: number): number => firstToken(end - 1);
  const clusters: { from: number; to: number; edits: Edit[] }[] = [];
  for (const e of sorted) {
    const from = firstToken(e.start);
    const to = lastToken(e.end);
    const prev = clusters[clusters.length - 1];
    if (prev && from <= prev.to) {
      prev.to = Math.max(prev.to, to);
      prev.edits.push(e);
    } else clusters.push({ from, to, edits: [e] });
  }
  const out: Token[] = [];
  let next = 0;
  for (const c of clusters) {
    out.push(...tokens.slice(next, c.from));
    next = c.to + 1;
    const hit = tokens.slice(c.from, c.to + 1);
    const base = bounds[c.from]!;
    const local = c.edits.map((e) => ({ ...e, start: e.start - base, end: e.end - base }));
    if (local.every((e) => e.text === "")) {
      // Deletions only: each word keeps its own time, and the words they empty go. A deletion that takes a word
      // and the space after it ("uh, " in " uh, we") empties one token but the space it removes is the next
      // token's: the emptied token's own leading space moves on to the next kept word ("I think we", not
      // "I thinkwe"), as in the string the edits describe.
      let offset = 0;
      let space = "";
      for (const t of hit) {
        const mine = local
          .filter((e) => e.start < offset + t.text.length && offset < e.end)
          .map((e) => ({
            start: Math.max(0, e.start - offset),
            end: Math.min(t.text.length, e.end - offset),
            text: "",
          }));
        const rest = applyEditsToString(t.text, mine);
        offset += t.text.length;
        if (!rest.trim()) {
          space ||= /^\s*/u.exec(rest)![0];
          continue;
        }
        out.push({ ...t, text: /^\s/u.test(rest) ? rest : space + rest });
        space = "";
      }
      continue;
    }
    const lastTok = hit[hit.length - 1]!;
    out.push({
      text: applyEditsToString(joinTokens(hit), local),
      start_at: hit[0]!.start_at,
      duration: lastTok.start_at + lastTok.duration - hit[0]!.start_at,
    });
  }
  out.push(...tokens.slice(next));
  // A deletion can leave the first word with a leading space.
  return out.map((t, k) => (k === 0 ? { ...t, text: t.text.replace(/^\s+/u, "") } : t));
}

/** A plain string as one untimed token run: what the stages' string forms use (tests, docs). */
export function runOnString(text: string, stage: (text: string) => Edit[]): string {
  return applyEditsToString(text, stage(text));
}

/** Non-overlapping union: earlier lists win where edits overlap. */
export function mergeEdits(lists: Edit[][]): Edit[] {
  const out: Edit[] = [];
  for (const e of lists.flat()) {
    if (!out.some((o) => e.start < o.end && o.start < e.end)) out.push(e);
  }
  return out.sort((a, b) => a.start - b.start);
}
