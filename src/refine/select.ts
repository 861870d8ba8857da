// Which hypothesis replaces an utterance's text: plain functions over the engine's scores, so the rule can be
// tested without a model. A hypothesis wins only when it scores clearly better than the current text on the same
// audio and is about as long (a decode that stops early scores well per token but drops words).
import type { RefineHypothesis } from "../engine/refineProtocol.js";

export interface SelectOptions {
  /** How much better (mean token log-probability) a hypothesis must score to replace the current text. */
  margin: number;
  /** Allowed length ratio hypothesis/current, in letters (spaces and punctuation not counted). */
  minRatio: number;
  maxRatio: number;
  /** Decodes that must agree on a hypothesis (capped by how many decodes ran). */
  minVotes: number;
  /** Utterances shorter than this (seconds) keep their text: on under a second of audio whisper invents text
   * ("Mr." → "Let's go.", "I'm sorry." → "Thank you very much.") that the teacher-forced score rates well. */
  minUtteranceS: number;
}

// One vote: the default decode is one beam search whose N best texts each count once (refiner.ts).
export const DEFAULT_SELECT: SelectOptions = {
  margin: 0.05,
  minRatio: 0.85,
  maxRatio: 1.3,
  minVotes: 1,
  minUtteranceS: 1,
};

/** Length in letters: spaces, punctuation and symbols not counted. */
export const letters = (s: string): number => s.normalize("NFKC").replace(/[\p{P}\p{S}\s]/gu, "").length;

/** The best acceptable hypothesis, or null to keep the current text. */
export function selectHypothesis(
  current: string,
  currentScore: number | null,
  hypotheses: readonly RefineHypothesis[],
  o: SelectOptions = DEFAULT_SELECT,
  decodes = 2,
): RefineHypothesis | null {
  const votesNeeded = Math.min(o.minVotes, Math.max(1, decodes));
  const base = letters(current);
  let best: RefineHypothesis | null = null;
  for (const h of hypotheses) {
    if (h.score === null || !Number.isFinite(h.score)) continue;
    if (h.text.trim() === current.trim()) continue;
    if ((h.votes ?? 1) < votesNeeded) continue;
    const n = letters(h.text);
    if (n === 0) continue;
    if (base > 0 && (n < base * o.minRatio || n > base * o.maxRatio)) continue;
    if (currentScore !== null && h.score <= currentScore + o.margin) continue;
    if (best === null || h.score > best.score!) best = h;
  }
  return best;
}
