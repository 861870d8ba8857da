// Subtitle cues from utterances, as plain data: utterances in, cues out. The rules (docs/extras.md):
// - a cue has at most `maxLines` lines (2) of at most `maxLineChars` columns (42), on one line when it fits, else
//   split where the lines come out most even; a wide character (Hangul, kana, Han) takes two columns, so a line
//   holds at most 21 of them;
// - a cue lasts at most `maxCueMs` (7 s), and at least `minCueMs` (1 s) when the next cue leaves room;
// - a cue never spans two utterances (so never two speakers), and closes early after a sentence end once it holds
//   half a line;
// - times come from word timestamps when the utterance has them, otherwise they are spread over the utterance in
//   proportion to the characters. The text always comes from `msg` (filters and normalization apply to it); words
//   only give the times, mapped by character position, so a word list that differs from the text still aligns.
// Scripts written without spaces (Han, Hiragana, Katakana) may break between any two characters; other words
// break only at spaces, and a word longer than a line is cut into line-sized pieces.

export interface CueRules {
  maxLineChars: number;
  maxLines: number;
  maxCueMs: number;
  minCueMs: number;
}

export const DEFAULT_CUE_RULES: CueRules = { maxLineChars: 42, maxLines: 2, maxCueMs: 7000, minCueMs: 1000 };

/** The utterance fields the cue builder reads (src/domain/utterance.ts has the full type). */
export interface CueSource {
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
  /** The known speaker's name, when the job named it (docs/speakers.md). */
  spk_name?: string | undefined;
  words?: { start_at: number; duration: number; text: string }[] | undefined;
}

export interface Cue {
  /** Milliseconds. */
  start: number;
  end: number;
  lines: string[];
  spk: number;
  spk_name?: string;
}

interface Unit {
  text: string;
  /** What goes before it when it does not start a line: " " or "". */
  sep: string;
  start: number;
  end: number;
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const PUNCT = /^\p{P}+$/u;
const SENTENCE_END = /[.!?。！？]["'”’)）」』]*$/u;
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

// East Asian wide characters take two columns on screen, as in a terminal: Hangul, kana, Han, CJK punctuation and
// fullwidth forms.
const WIDE =
  /^[\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff01-\uff60\uffe0-\uffe6]/u;

/** Width in columns: one per user-perceived character, two for a wide one. */
export const charLength = (s: string): number => {
  let n = 0;
  for (const g of graphemes.segment(s)) n += WIDE.test(g.segment) ? 2 : 1;
  return n;
};

const splitGraphemes = (s: string): string[] => Array.from(graphemes.segment(s), (g) => g.segment);

/**
 * Builds the cues of a transcript. `prefix(utterance)` is text glued to the first line of each cue (an SRT speaker
 * label); it counts toward the line length.
 */
export function buildCues(
  utterances: CueSource[],
  rules: CueRules = DEFAULT_CUE_RULES,
  prefix?: (u: CueSource) => string,
): Cue[] {
  const cues: Cue[] = [];
  const sorted = [...utterances].sort((a, b) => a.start_at - b.start_at);
  for (const u of sorted) {
    const pre = prefix?.(u) ?? "";
    const units = timedUnits(u, Math.max(1, rules.maxLineChars - charLength(pre)));
    let cur: Unit[] = [];
    const flush = (): void => {
      if (cur.length === 0) return;
      const lines = wrap(cur, pre, rules) ?? [pre + joinUnits(cur)];
      const end = Math.max(...cur.map((x) => x.end));
      cues.push({ start: cur[0]!.start, end, lines, spk: u.spk, ...(u.spk_name ? { spk_name: u.spk_name } : {}) });
      cur = [];
    };
    for (const unit of units) {
      if (cur.length > 0 && (unit.end - cur[0]!.start > rules.maxCueMs || wrap([...cur, unit], pre, rules) === null))
        flush();
      cur.push(unit);
      if (SENTENCE_END.test(unit.text) && charLength(joinUnits(cur)) >= rules.maxLineChars / 2) flush();
    }
    flush();
  }
  return settleTimes(cues, rules);
}

/** Sorted by start; every cue ends after it starts, lasts at most maxCueMs, and at least minCueMs where the next
 * cue starts later than that. */
function settleTimes(cues: Cue[], rules: CueRules): Cue[] {
  cues.sort((a, b) => a.start - b.start || a.end - b.end);
  for (let i = 0; i < cues.length; i++) {
    const c = cues[i]!;
    const next = cues[i + 1];
    c.end = Math.min(c.end, c.start + rules.maxCueMs);
    if (c.end - c.start < rules.minCueMs) {
      const room = next && next.start > c.start ? next.start : Infinity;
      c.end = Math.max(c.end, Math.min(c.start + rules.minCueMs, room));
    }
    if (c.end <= c.start) c.end = c.start + 1;
  }
  return cues;
}

function joinUnits(units: Unit[]): string {
  return units.map((u, i) => (i === 0 ? u.text : u.sep + u.text)).join("");
}

/**
 * The fewest lines, split as evenly as possible, that hold the units in at most maxLines lines of at most maxLineChars each (the prefix glued to
 * the first line), or null when they do not fit.
 */
export function wrap(units: Unit[], prefix: string, rules: CueRules): string[] | null {
  const n = units.length;
  const len = units.map((u) => charLength(u.text));
  const sepLen = units.map((u) => charLength(u.sep));
  const pre = charLength(prefix);
  // Width of units [i, j) on one line.
  const width = (i: number, j: number): number => {
    let w = i === 0 ? pre : 0;
    for (let k = i; k < j; k++) w += len[k]! + (k > i ? sepLen[k]! : 0);
    return w;
  };
  // best[i][l]: the smallest possible longest line when units [i, n) are set on at most l lines.
  const best: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(rules.maxLines + 1).fill(Infinity));
  const cut: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(rules.maxLines + 1).fill(-1));
  for (let l = 0; l <= rules.maxLines; l++) best[n]![l] = 0;
  for (let i = n - 1; i >= 0; i--) {
    for (let l = 1; l <= rules.maxLines; l++) {
      for (let j = i + 1; j <= n; j++) {
        const w = width(i, j);
        if (w > rules.maxLineChars) break;
        const v = Math.max(w, best[j]![l - 1]!);
        if (v < best[i]![l]!) {
          best[i]![l] = v;
          cut[i]![l] = j;
        }
      }
    }
  }
  // As few lines as fit, then as even as possible.
  let l0 = 1;
  while (l0 <= rules.maxLines && best[0]![l0] === Infinity) l0++;
  if (l0 > rules.maxLines) return null;
  const lines: string[] = [];
  for (let i = 0, l = l0; i < n; l--) {
    const j = cut[i]![l]!;
    lines.push((i === 0 ? prefix : "") + joinUnits(units.slice(i, j)));
    i = j;
  }
  return lines;
}

/** The utterance's text cut into units that a line may break between, each with its start and end time. */
function timedUnits(u: CueSource, maxUnitChars: number): Unit[] {
  const raw: { text: string; sep: string }[] = [];
  let sep = "";
  for (const part of u.msg.split(/(\s+)/)) {
    if (!part) continue;
    if (/^\s+$/.test(part)) {
      sep = raw.length > 0 ? " " : "";
      continue;
    }
    const pieces = CJK.test(part) ? splitGraphemes(part) : chunk(part, maxUnitChars);
    pieces.forEach((p, i) => {
      const last = raw[raw.length - 1];
      // Punctuation stays with the character before it, so no line starts with 、 or 。
      if (i > 0 && last && PUNCT.test(p) && charLength(last.text + p) <= maxUnitChars) last.text += p;
      else raw.push({ text: p, sep: i === 0 ? sep : "" });
    });
    sep = "";
  }
  const clock = timeMap(
    u,
    raw.reduce((n, r) => n + charLength(r.text), 0),
  );
  let at = 0;
  return raw.map((r) => {
    const from = at;
    at += charLength(r.text);
    const start = clock.startOf(from);
    return { ...r, start, end: Math.max(start, clock.endOf(at)) };
  });
}

/** A word cut into pieces of at most `size` columns. */
function chunk(word: string, size: number): string[] {
  if (charLength(word) <= size) return [word];
  const out: string[] = [];
  let cur = "";
  for (const g of splitGraphemes(word)) {
    if (cur && charLength(cur + g) > size) {
      out.push(cur);
      cur = "";
    }
    cur += g;
  }
  if (cur) out.push(cur);
  return out;
}

/** Time of a character position of the text: through the word timestamps when present, else linear. */
function timeMap(u: CueSource, totalChars: number): { startOf(c: number): number; endOf(c: number): number } {
  const uEnd = u.start_at + u.duration;
  const words = (u.words ?? []).filter((w) => w.text.trim().length > 0);
  if (words.length === 0 || totalChars === 0) {
    const at = (c: number): number => Math.round(u.start_at + (totalChars ? c / totalChars : 0) * u.duration);
    return { startOf: at, endOf: at };
  }
  const sizes = words.map((w) => charLength(w.text.replace(/\s+/g, "")) || 1);
  const cum = [0];
  for (const s of sizes) cum.push(cum[cum.length - 1]! + s);
  const scale = cum[cum.length - 1]! / totalChars;
  const inWord = (j: number, p: number): number => {
    const w = words[j]!;
    const f = Math.min(1, Math.max(0, (p - cum[j]!) / sizes[j]!));
    return Math.round(w.start_at + f * w.duration);
  };
  const clamp = (t: number): number => Math.min(uEnd, Math.max(u.start_at, t));
  return {
    // The word that starts at or spans the position.
    startOf(c) {
      const p = c * scale;
      let j = 0;
      while (j < words.length - 1 && cum[j + 1]! <= p) j++;
      return clamp(inWord(j, p));
    },
    // The word that ends at or spans the position.
    endOf(c) {
      const p = c * scale;
      let j = words.length - 1;
      while (j > 0 && cum[j]! >= p) j--;
      return clamp(inWord(j, p));
    },
  };
}
