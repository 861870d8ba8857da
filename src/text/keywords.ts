// Stage `keywords`, the post-correction half of keyword boosting (the other half is the decoder's hotwords, see
// decoderHints in index.ts): a span of the transcript that is a near miss of a keyword becomes the keyword.
// Korean compares jamo (disassembled syllables, so 삼게탕 is one jamo from 삼계탕), other languages characters.
// A span is a run of whole words (Korean: the particle after it stays: "삼게탕을" → "삼계탕을"); Japanese, without
// spaces, compares every character window of about the keyword's length. Short keywords are never corrected by
// similarity (too many near misses among ordinary words).
import { disassemble } from "es-hangul";
import { levenshtein } from "./editDistance.js";
import type { Edit } from "./edits.js";

/** Largest edit distance, relative to the keyword's length in the compared units, that counts as a near miss. */
export const MAX_RELATIVE_DISTANCE = 0.25;

const units = (s: string, lang: string): string[] =>
  lang === "ko" ? [...disassemble(s.replace(/\s+/g, ""))] : [...s.replace(/\s+/g, "").toLowerCase()];

/** Relative distance of a candidate to a keyword, in the keyword's units. */
export function keywordDistance(candidate: string, keyword: string, lang: string): number {
  const k = units(keyword, lang);
  return levenshtein(units(candidate, lang), k) / Math.max(1, k.length);
}

const KO_PARTICLE =
  /^(?:을|를|이|가|은|는|에|의|도|로|으로|와|과|랑|에서|에게|까지|부터|만|이나|나|인가|이다|입니다|이에요|예요|이야|야|처럼|보다)$/u;

interface Candidate {
  start: number;
  end: number;
  score: number;
  keyword: string;
}

function spacedCandidates(text: string, lang: string, keyword: string): Candidate[] {
  const words = [...text.matchAll(/[^\s.,?!;:"'()]+/gu)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    text: m[0],
  }));
  const kWords = keyword.split(/\s+/).length;
  const kLen = [...keyword.replace(/\s+/g, "")].length;
  const out: Candidate[] = [];
  for (let i = 0; i < words.length; i++) {
    for (let n = Math.max(1, kWords - 1); n <= kWords + 1 && i + n <= words.length; n++) {
      const span = words.slice(i, i + n);
      const start = span[0]!.start;
      const full = text.slice(start, span[n - 1]!.end);
      // Korean: the last word may carry a particle or copula; try the span without it.
      const chars = [...full];
      for (let cut = 0; cut <= (lang === "ko" ? 3 : 0) && chars.length - cut > 0; cut++) {
        const cand = chars.slice(0, chars.length - cut).join("");
        if (cut > 0 && !KO_PARTICLE.test(chars.slice(chars.length - cut).join(""))) continue;
        const candLen = [...cand.replace(/\s+/g, "")].length;
        if (Math.abs(candLen - kLen) > 1) continue;
        const score = keywordDistance(cand, keyword, lang);
        if (score <= MAX_RELATIVE_DISTANCE) out.push({ start, end: start + cand.length, score, keyword });
      }
    }
  }
  return out;
}

function japaneseCandidates(text: string, keyword: string): Candidate[] {
  const chars = [...text];
  const k = [...keyword].length;
  const out: Candidate[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const c of chars) {
    offsets.push(at);
    at += c.length;
  }
  offsets.push(at);
  for (let i = 0; i < chars.length; i++) {
    for (let n = k - 1; n <= k + 1; n++) {
      if (n < 1 || i + n > chars.length) continue;
      const cand = chars.slice(i, i + n).join("");
      const score = keywordDistance(cand, keyword, "ja");
      if (score <= MAX_RELATIVE_DISTANCE) out.push({ start: offsets[i]!, end: offsets[i + n]!, score, keyword });
    }
  }
  return out;
}

/** Minimum keyword length (characters, spaces not counted) for similarity correction, per language. */
const MIN_CHARS: Record<string, number> = { ko: 3, ja: 4, en: 5 };

export function keywordEdits(text: string, lang: string, keywords: readonly string[]): Edit[] {
  const candidates: Candidate[] = [];
  for (const keyword of new Set(keywords.map((k) => k.trim()).filter(Boolean))) {
    if ([...keyword.replace(/\s+/g, "")].length < (MIN_CHARS[lang] ?? 5)) continue;
    const found = lang === "ja" ? japaneseCandidates(text, keyword) : spacedCandidates(text, lang, keyword);
    candidates.push(...found);
  }
  // Best first (closest, then longest); exact hits are kept as they are and block overlapping corrections.
  candidates.sort((a, b) => a.score - b.score || b.end - b.start - (a.end - a.start));
  const taken: Candidate[] = [];
  for (const c of candidates) if (!taken.some((t) => c.start < t.end && t.start < c.end)) taken.push(c);
  return taken
    .filter((c) => text.slice(c.start, c.end) !== c.keyword)
    .map((c) => ({ start: c.start, end: c.end, text: c.keyword }))
    .sort((a, b) => a.start - b.start);
}
