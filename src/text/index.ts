// The text stage of the pipeline: the recognizer's utterances (with their words) in, the utterances the user asked
// for out. Each option is one stage, a plain function over text returning edits (see edits.ts), applied per
// utterance in this order: disfluency filter → ITN (or its reverse) → keyword correction → profanity mask; then the
// paragraph splitter regroups the words (or, when it is off, each speaker turn becomes one utterance). docs/text.md describes each stage.
import type { Utterance, Word } from "../domain/utterance.js";
import { disfluencyEdits, VERBATIM_PROMPTS } from "./disfluency.js";
import { applyEdits, type Edit, joinTokens, type Token } from "./edits.js";
import { itnEdits } from "./itn.js";
import { keywordEdits } from "./keywords.js";
import { type Run, splitParagraphs } from "./paragraphs.js";
import { profanityEdits } from "./profanity.js";

export interface TextOptions {
  use_itn: boolean;
  use_disfluency_filter: boolean;
  use_profanity_filter: boolean;
  use_paragraph_splitter: boolean;
  paragraph_splitter: { max: number };
  use_word_timestamp: boolean;
  keywords?: string[] | undefined;
}

/** Whether the job's disfluency filter would take words out of `text` (a decoder's raw output). */
export const filterRemovesWords = (text: string, lang: string, o: TextOptions): boolean =>
  o.use_disfluency_filter && disfluencyEdits(text, lang).length > 0;

/** Whether the recognizer must return word times for these options (paragraph times come from words). */
export const needsWords = (o: TextOptions): boolean => o.use_word_timestamp || o.use_paragraph_splitter;

/** The utterance's words as tokens that join back into its text; without words, its spaces cut it, times shared out. */
export function toTokens(u: Utterance): Token[] {
  if (u.words && u.words.length > 0) {
    const tokens: Token[] = [];
    let pos = 0;
    for (const w of u.words) {
      const at = u.msg.indexOf(w.text, pos);
      if (at < 0) break;
      tokens.push({ text: u.msg.slice(pos, at + w.text.length), start_at: w.start_at, duration: w.duration });
      pos = at + w.text.length;
    }
    if (tokens.length === u.words.length) {
      const last = tokens[tokens.length - 1]!;
      last.text += u.msg.slice(pos);
      return tokens;
    }
  }
  const pieces = u.msg.split(/(?=\s)/u).filter((p) => p.length > 0);
  const total = Math.max(1, u.msg.length);
  const tokens: Token[] = [];
  let at = 0;
  for (const p of pieces) {
    const s = u.start_at + Math.round((u.duration * at) / total);
    at += p.length;
    const e = u.start_at + Math.round((u.duration * at) / total);
    tokens.push({ text: p, start_at: s, duration: e - s });
  }
  return tokens;
}

type Stage = (text: string, lang: string) => Edit[];

function stagesFor(o: TextOptions): Stage[] {
  const stages: Stage[] = [];
  if (o.use_disfluency_filter) stages.push(disfluencyEdits);
  stages.push((text, lang) => itnEdits(text, lang, o.use_itn));
  if (o.keywords && o.keywords.length > 0) {
    const keywords = o.keywords;
    stages.push((text, lang) => keywordEdits(text, lang, keywords));
  }
  if (o.use_profanity_filter) stages.push(profanityEdits);
  return stages;
}

/** Runs one utterance's tokens through the stages; an utterance may come out empty (all fillers). */
export function transformTokens(tokens: Token[], lang: string, stages: readonly Stage[]): Token[] {
  let out = tokens;
  for (const stage of stages) out = applyEdits(out, stage(joinTokens(out), lang));
  return out;
}

const toWords = (tokens: readonly Token[]): Word[] =>
  tokens
    .map((t) => ({ start_at: t.start_at, duration: t.duration, text: t.text.trim() }))
    .filter((w) => w.text.length > 0);

function fromRun(run: Run, words: boolean, times?: { start_at: number; duration: number }): Utterance {
  const end = Math.max(...run.tokens.map((t) => t.start_at + t.duration));
  const start = times?.start_at ?? Math.min(...run.tokens.map((t) => t.start_at));
  const u: Utterance = {
    start_at: start,
    duration: times?.duration ?? end - start,
    msg: joinTokens(run.tokens)
      .replace(/\s{2,}/gu, " ")
      .trim(),
    spk: run.spk,
    lang: run.lang,
  };
  if (words) u.words = toWords(run.tokens);
  return u;
}

/** Languages written without spaces between words: joining two utterances adds none. */
const UNSPACED = new Set(["ja", "zh", "th"]);

export function applyTextOptions(utterances: readonly Utterance[], o: TextOptions): Utterance[] {
  const stages = stagesFor(o);
  const done = utterances
    .map((u) => ({ u, tokens: transformTokens(toTokens(u), u.lang, stages) }))
    .filter((x) => joinTokens(x.tokens).trim().length > 0);
  // One run per stretch of consecutive utterances of one speaker in one language, timed by its utterances.
  const runs: (Run & { start_at: number; end: number })[] = [];
  for (const { u, tokens } of done) {
    const prev = runs[runs.length - 1];
    if (prev && prev.spk === u.spk && prev.lang === u.lang) {
      const sep = UNSPACED.has(u.lang) ? "" : " ";
      const [head, ...rest] = tokens;
      prev.tokens.push({ ...head!, text: sep + head!.text.replace(/^\s+/u, "") }, ...rest);
      prev.end = Math.max(prev.end, u.start_at + u.duration);
    } else
      runs.push({ spk: u.spk, lang: u.lang, tokens: [...tokens], start_at: u.start_at, end: u.start_at + u.duration });
  }
  // Off, as the real service does it: no paragraphs, a speaker's turn (the whole file without diarization) is one
  // utterance.
  if (!o.use_paragraph_splitter) {
    return runs.map((r) => fromRun(r, o.use_word_timestamp, { start_at: r.start_at, duration: r.end - r.start_at }));
  }
  return splitParagraphs(runs, o.paragraph_splitter.max).map((r) => fromRun(r, o.use_word_timestamp));
}

/**
 * What the text options ask of the decoder: keywords as faster-whisper hotwords, and, with the disfluency filter
 * off, a verbatim-style prompt so Whisper writes the fillers it would otherwise drop. The prompt is in the job's
 * language, so it needs one known in advance: a fixed language, or detection among a single candidate.
 */
export function decoderHints(o: TextOptions & { language: string; language_candidates?: string[] | undefined }): {
  initial_prompt: string | null;
  hotwords: string | null;
} {
  const keywords = o.keywords?.filter((k) => k.trim().length > 0) ?? [];
  const fixed = o.language !== "detect" && o.language !== "multi";
  const known = fixed ? o.language : o.language_candidates?.length === 1 ? o.language_candidates[0]! : null;
  return {
    initial_prompt: o.use_disfluency_filter || known === null ? null : (VERBATIM_PROMPTS[known] ?? null),
    hotwords: keywords.length > 0 ? keywords.join(", ") : null,
  };
}
