// N-best rescoring (docs/enterprise.md "Refinement"): the N best texts of a beam search over an utterance's
// audio, each with its acoustic score (whisper's teacher-forced mean token log-probability on that audio) and a
// language-model score (an LLM's mean token log-probability of the text after its context), and the current text
// scored the same two ways. The winner maximises acoustic + lambda * lm; it replaces the current text only when it
// wins by more than the margin and is about as long (a text that stops early scores well per token).
import { letters, type SelectOptions } from "../../src/refine/select.js";

export interface ScoredText {
  text: string;
  /** Mean token log-probability given the utterance's audio (null: could not be scored). */
  acoustic: number | null;
  /** Mean token log-probability under the language model after the context (null: not scored). */
  lm: number | null;
}

export interface RescoreOptions extends Pick<SelectOptions, "minRatio" | "maxRatio"> {
  /** Weight of the language-model score against the acoustic one. */
  lambda: number;
  /** How much better the combined score of a hypothesis must be than the current text's. */
  margin: number;
}

export const DEFAULT_RESCORE: RescoreOptions = { lambda: 0.3, margin: 0, minRatio: 0.85, maxRatio: 1.3 };

/** acoustic + lambda * lm, or null when either score is missing (such a text can neither win nor be beaten). */
export function combinedScore(t: ScoredText, lambda: number): number | null {
  if (t.acoustic === null || !Number.isFinite(t.acoustic)) return null;
  if (lambda === 0) return t.acoustic;
  if (t.lm === null || !Number.isFinite(t.lm)) return null;
  return t.acoustic + lambda * t.lm;
}

/** The hypothesis that replaces the current text, or null to keep it. */
export function rescoreNBest(
  current: ScoredText,
  hypotheses: readonly ScoredText[],
  o: RescoreOptions = DEFAULT_RESCORE,
): ScoredText | null {
  const base = combinedScore(current, o.lambda);
  if (base === null) return null;
  const length = letters(current.text);
  let best: ScoredText | null = null;
  let bestScore = base + o.margin;
  for (const h of hypotheses) {
    if (h.text.trim() === current.text.trim()) continue;
    const n = letters(h.text);
    if (n === 0 || (length > 0 && (n < length * o.minRatio || n > length * o.maxRatio))) continue;
    const s = combinedScore(h, o.lambda);
    if (s !== null && s > bestScore) [best, bestScore] = [h, s];
  }
  return best;
}
