// Stage `use_paragraph_splitter`: regroups a speaker's words into paragraphs of whole sentences, as the real
// service does (docs/api.md, "The real service's rules"): sentences are packed into a paragraph while it stays within
// `max` characters; a sentence is never cut, so one longer than `max` is a paragraph of its own, and a smaller `max`
// never cuts below the sentence. Only a run-on stretch with no sentence end in RUN_ON characters (Whisper leaves
// some speech unpunctuated) is cut, at clause ends first, then between words -- never inside a word. A paragraph's
// times are its first word's start and last word's end. Paragraphs never join two speakers, two languages, or
// speech across a long silence (GAP_MS).
//
// Sentence ends: . ? ! 。 ！ ？ … and, for Korean, which Whisper often leaves unpunctuated, a word ending in a
// sentence-final verb ending (습니다, 어요, 죠, 는다 ...). This is a rule-based splitter: see docs/text.md for why
// not Kiwi.
import type { Token } from "./edits.js";

export interface Run {
  spk: number;
  lang: string;
  tokens: Token[];
}

/** Silence that always ends a paragraph. */
export const GAP_MS = 2000;

const SENTENCE_END = /[.?!。！？…]["'」』)）]*$/u;
const KO_FINAL =
  /(?:습니다|습니까|니다|니까|어요|아요|여요|에요|예요|세요|네요|군요|래요|게요|까요|나요|지요|죠|는다|었다|았다|였다|했다|겠다|이다|있다|없다|같다|한다|된다|냐|니|자|라)$/u;
const CLAUSE_END =
  /(?:[,，、;:；：]|(?:고|는데|은데|지만|면서|어서|아서|해서|니까|으면|면|며|거나|든지|도록|려고))["'」』)）]*$/u;

function isSentenceEnd(t: Token, lang: string): boolean {
  const w = t.text.trim();
  return SENTENCE_END.test(w) || (lang === "ko" && KO_FINAL.test(w));
}

const len = (tokens: readonly Token[]): number =>
  [
    ...tokens
      .map((t) => t.text)
      .join("")
      .trim(),
  ].length;

/** Below this share of the limit, a piece is not cut at a clause end (a word boundary that fills it is better). */
const MIN_CLAUSE_FILL = 0.3;

/** A stretch longer than this with no sentence end is cut (at clause ends, then between words). */
export const RUN_ON = 200;

/**
 * Cuts a run of tokens into pieces of at most max characters: each piece is filled as far as max allows, then
 * cut back to the last clause end inside it (if the piece keeps a fair share of max), else between the last two
 * words that fit.
 */
function pack(tokens: Token[], max: number): Token[][] {
  const out: Token[][] = [];
  let i = 0;
  while (i < tokens.length) {
    let j = i;
    while (j + 1 < tokens.length && len(tokens.slice(i, j + 2)) <= max) j++;
    if (j === tokens.length - 1) {
      out.push(tokens.slice(i));
      break;
    }
    let best = j;
    for (let k = j; k >= i; k--) {
      if (CLAUSE_END.test(tokens[k]!.text.trim()) && len(tokens.slice(i, k + 1)) >= max * MIN_CLAUSE_FILL) {
        best = k;
        break;
      }
    }
    out.push(tokens.slice(i, best + 1));
    i = best + 1;
  }
  return out;
}

/** The block's sentences, each ending at a sentence end (the last may not); run-ons cut to RUN_ON characters. */
function sentences(tokens: Token[], lang: string): Token[][] {
  const out: Token[][] = [];
  let start = 0;
  tokens.forEach((t, i) => {
    if (isSentenceEnd(t, lang) || i === tokens.length - 1) {
      const sentence = tokens.slice(start, i + 1);
      out.push(...(len(sentence) > RUN_ON ? pack(sentence, RUN_ON) : [sentence]));
      start = i + 1;
    }
  });
  return out;
}

/** Whole sentences packed into paragraphs of at most max characters; a longer sentence stands alone. */
function packSentences(tokens: Token[], max: number, lang: string): Token[][] {
  const out: Token[][] = [];
  let current: Token[] = [];
  for (const sentence of sentences(tokens, lang)) {
    if (current.length > 0 && len([...current, ...sentence]) > max) {
      out.push(current);
      current = [];
    }
    current.push(...sentence);
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Splits each run (one speaker's consecutive speech) into paragraphs. */
export function splitParagraphs(runs: readonly Run[], max: number): Run[] {
  const out: Run[] = [];
  for (const run of runs) {
    // First cut at long silences, then by length.
    const blocks: Token[][] = [];
    for (const t of run.tokens) {
      const block = blocks[blocks.length - 1];
      const prev = block?.[block.length - 1];
      if (!block || !prev || t.start_at - (prev.start_at + prev.duration) > GAP_MS) blocks.push([t]);
      else block.push(t);
    }
    for (const block of blocks) {
      const pieces = packSentences(block, max, run.lang);
      for (const p of pieces) {
        const first = p[0]!;
        out.push({
          spk: run.spk,
          lang: run.lang,
          tokens: [{ ...first, text: first.text.replace(/^\s+/, "") }, ...p.slice(1)],
        });
      }
    }
  }
  return out;
}
