// Which changes refinement may make to an utterance: only those that independent decodes of its audio agree on
// (ROVER-style voting per span), never one that Whisper's own score alone prefers. The teacher-forced score of the
// same small model rates fluent-looking text over what was said, and numbers suffered most ("기간이 20일입니다" →
// "기가능이 11입니다", issue 48). Plain functions over the engine's output, testable without a model.
//
// Each decode's best text is aligned with the current text on letters and digits (spaces and punctuation are not
// compared, so a change of spacing alone is no change); every maximal run of differences is one edit, identified by
// the current text's letters it replaces and the letters it writes. An edit is made when enough decodes write that
// same edit; an edit that touches a digit, a Latin-script letter or one of the client's keywords needs every decode.

export interface AgreementOptions {
  /** Decodes whose best texts must write the same edit for it to be made. */
  minVotes: number;
  /** An edit touching a number, a Latin-script word or a keyword needs every decode, and at least this many. */
  protectedVotes: number;
  /** When set, every decode that wrote an edit must also score its text this much better (mean token
   * log-probability on the span) than the current text: the model's score as a veto, never as the reason. */
  margin: number | null;
  /** When set, an edit that replaces or writes more letters than this is not made: agreeing decodes that rewrite a
   * whole phrase are most often all wrong the same way (8 kHz ko: 침대 방으로 → 틀려받고). */
  maxEditLetters: number | null;
}

interface Letter {
  key: string;
  start: number;
  end: number;
}

/** The letters and digits of a text with where each one is (NFKC, lower case; one entry per code point). */
function lettersOf(s: string): Letter[] {
  const out: Letter[] = [];
  let i = 0;
  for (const ch of s) {
    const key = ch.normalize("NFKC").toLowerCase();
    if (/[\p{L}\p{N}]/u.test(key)) out.push({ key, start: i, end: i + ch.length });
    i += ch.length;
  }
  return out;
}

interface Block {
  /** Letters of the current text replaced: [from, to). */
  from: number;
  to: number;
  /** Letters of the decode's text written instead: [hFrom, hTo). */
  hFrom: number;
  hTo: number;
}

/** Maximal runs of differences between two letter sequences (Levenshtein alignment, substitutions preferred). */
function diffBlocks(a: string[], b: string[]): Block[] {
  const [n, m] = [a.length, b.length];
  const d = new Uint32Array((n + 1) * (m + 1)); // d[i * (m + 1) + j]: distance of a[..i] and b[..j]
  const at = (i: number, j: number): number => d[i * (m + 1) + j] ?? 0;
  for (let i = 0; i <= n; i++) d[i * (m + 1)] = i;
  for (let j = 0; j <= m; j++) d[j] = j;
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= m; j++) {
      const sub = at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1);
      d[i * (m + 1) + j] = Math.min(sub, at(i - 1, j) + 1, at(i, j - 1) + 1);
    }
  }
  const matched: [number, number][] = []; // aligned equal pairs, from the end
  let [i, j] = [n, m];
  while (i > 0 && j > 0) {
    if (a[i - 1] === b[j - 1] && at(i, j) === at(i - 1, j - 1)) {
      matched.push([i - 1, j - 1]);
      i--;
      j--;
    } else if (at(i, j) === at(i - 1, j - 1) + 1) {
      i--;
      j--;
    } else if (at(i, j) === at(i - 1, j) + 1) i--;
    else j--;
  }
  matched.reverse();
  const blocks: Block[] = [];
  let [pa, pb] = [0, 0];
  for (const [x, y] of [...matched, [n, m] as [number, number]]) {
    if (x > pa || y > pb) blocks.push({ from: pa, to: x, hFrom: pb, hTo: y });
    [pa, pb] = [x + 1, y + 1];
  }
  return blocks;
}

const NEEDS_ALL = /[\p{N}\p{Script=Latin}]/u;

/** The letter ranges of the current text that spell a keyword (compared on letters, so across spacing). */
function keywordRanges(letters: Letter[], keywords: readonly string[]): [number, number][] {
  const text = letters.map((l) => l.key);
  const out: [number, number][] = [];
  for (const k of keywords) {
    const kw = lettersOf(k).map((l) => l.key);
    if (kw.length === 0) continue;
    for (let i = 0; i + kw.length <= text.length; i++) {
      if (kw.every((c, j) => text[i + j] === c)) out.push([i, i + kw.length]);
    }
  }
  return out;
}

export interface Vote {
  /** A decode's best text. */
  text: string;
  /** Its score on the span (null: not scored). */
  score: number | null;
}

/** The current text with the edits the decodes agree on, or null when there is none. */
export function agreedText(
  current: string,
  currentScore: number | null,
  votes: readonly Vote[],
  keywords: readonly string[],
  o: AgreementOptions,
): string | null {
  const base = lettersOf(current);
  if (base.length === 0 || votes.length === 0) return null;
  const kwRanges = keywordRanges(base, keywords);
  const keywordKeys = keywords
    .map((k) =>
      lettersOf(k)
        .map((l) => l.key)
        .join(""),
    )
    .filter((k) => k.length > 0);
  // edit → the decodes that write it, and how to write it (from the first such decode's text)
  const tally = new Map<string, { block: Block; text: string; voters: Vote[] }>();
  for (const v of votes) {
    const hyp = lettersOf(v.text);
    for (const block of diffBlocks(
      base.map((l) => l.key),
      hyp.map((l) => l.key),
    )) {
      const written = hyp.slice(block.hFrom, block.hTo);
      const id = `${block.from}:${block.to}:${written.map((l) => l.key).join("")}`;
      const entry = tally.get(id) ?? { block, text: v.text, voters: [] };
      entry.voters.push(v);
      tally.set(id, entry);
    }
  }
  const accepted: { block: Block; text: string }[] = [];
  for (const [id, { block, text, voters }] of tally) {
    const written = id.slice(id.indexOf(":", id.indexOf(":") + 1) + 1);
    const replaced = base
      .slice(block.from, block.to)
      .map((l) => l.key)
      .join("");
    const touchesKeyword =
      kwRanges.some(([s, e]) => block.from < e && s < Math.max(block.to, block.from + 1)) ||
      keywordKeys.some((k) => written.includes(k));
    const guarded = NEEDS_ALL.test(replaced) || NEEDS_ALL.test(written) || touchesKeyword;
    const needed = guarded ? Math.max(o.protectedVotes, votes.length) : o.minVotes;
    if (voters.length < needed) continue;
    if (o.maxEditLetters !== null && Math.max(block.to - block.from, block.hTo - block.hFrom) > o.maxEditLetters)
      continue;
    if (o.margin !== null) {
      if (currentScore === null) continue;
      if (!voters.every((v) => v.score !== null && v.score > currentScore + o.margin!)) continue;
    }
    accepted.push({ block, text });
  }
  if (accepted.length === 0) return null;
  // Apply from the end, so earlier offsets stay valid; of two overlapping edits only the later-starting is kept.
  accepted.sort((x, y) => y.block.from - x.block.from || y.block.to - x.block.to);
  let out = current;
  let limit = Number.POSITIVE_INFINITY; // letters from here on were already rewritten
  for (const { block, text } of accepted) {
    if (block.to >= limit) continue; // no matched letter between it and an edit already made
    const hyp = lettersOf(text);
    // The span between the letters around the edit, in both texts: the decode's spacing and punctuation there
    // come with its letters (an inserted word gets its spaces).
    const from = block.from === 0 ? 0 : base[block.from - 1]!.end;
    const to = block.to === base.length ? current.length : base[block.to]!.start;
    const hFrom = block.hFrom === 0 ? 0 : hyp[block.hFrom - 1]!.end;
    const hTo = block.hTo === hyp.length ? text.length : hyp[block.hTo]!.start;
    out = out.slice(0, from) + text.slice(hFrom, hTo) + out.slice(to);
    limit = block.from;
  }
  out = out.replace(/\s+/gu, " ").trim();
  return out === current.trim() ? null : out;
}
