// Stage `use_profanity_filter`: masks profane words with one `*` per character (spaces inside a spaced-out word
// are kept). Lists are data (data/profanity.ts, sources in data/README.md). Korean entries match inside a word
// ("개새끼야") and spelled out with spaces or dots between syllables ("씨 발", "씨.발") when the first syllable starts
// a word (so "아저씨 발이" is left alone); exceptions ("시발점") protect ordinary words. Japanese entries match
// anywhere; English entries only as whole words, so "Scunthorpe" and "class" stay.
import { PROFANITY_EN, PROFANITY_JA, PROFANITY_KO, PROFANITY_KO_EXCEPTIONS } from "./data/profanity.js";
import type { Edit } from "./edits.js";
import { escapeRegExp } from "./regex.js";

const longestFirst = (words: readonly string[]): string[] => [...words].sort((a, b) => b.length - a.length);

const KO_COMPACT = new RegExp(longestFirst(PROFANITY_KO).map(escapeRegExp).join("|"), "gu");
const KO_SPACED = new RegExp(
  `(?<![가-힣ㄱ-ㅎ])(?:${longestFirst(PROFANITY_KO.filter((w) => [...w].length >= 2))
    .map((w) => [...w].map(escapeRegExp).join("[\\s.·*_-]+"))
    .join("|")})`,
  "gu",
);
const JA = new RegExp(longestFirst(PROFANITY_JA).map(escapeRegExp).join("|"), "gu");
const EN = new RegExp(`(?<![A-Za-z])(?:${longestFirst(PROFANITY_EN).map(escapeRegExp).join("|")})(?![A-Za-z])`, "giu");

const mask = (s: string): string => s.replace(/[^\s]/gu, "*");

function maskAll(text: string, re: RegExp, skip?: (start: number, end: number) => boolean): Edit[] {
  const edits: Edit[] = [];
  for (const m of text.matchAll(re)) {
    const start = m.index;
    const end = start + m[0].length;
    if (skip?.(start, end) || edits.some((e) => start < e.end && e.start < end)) continue;
    edits.push({ start, end, text: mask(m[0]) });
  }
  return edits;
}

/** True when text[start, end) lies inside one of the exception words. */
function inException(text: string, start: number, end: number): boolean {
  return PROFANITY_KO_EXCEPTIONS.some((w) => {
    for (let i = text.indexOf(w); i >= 0; i = text.indexOf(w, i + 1))
      if (i <= start && end <= i + w.length) return true;
    return false;
  });
}

export function profanityEdits(text: string, lang: string): Edit[] {
  // Every list applies in every language, with the language's own first: speech mixes languages.
  const ko = [
    ...maskAll(text, KO_SPACED, (s, e) => inException(text, s, e)),
    ...maskAll(text, KO_COMPACT, (s, e) => inException(text, s, e)),
  ];
  const all = [
    ...(lang === "ja" ? maskAll(text, JA) : []),
    ...ko,
    ...maskAll(text, EN),
    ...(lang === "ja" ? [] : maskAll(text, JA)),
  ];
  const out: Edit[] = [];
  for (const e of all) if (!out.some((o) => e.start < o.end && o.start < e.end)) out.push(e);
  return out.sort((a, b) => a.start - b.start);
}
