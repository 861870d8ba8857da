// Types of the engine's `refine` operation (engine/sori_engine/refiner.py; docs/engine.md).
import type { ModelSpec } from "./protocol.js";

export interface RefineDecode {
  beam_size: number;
  patience: number;
  /** Give the previous utterance's text to the decoder as its prompt. */
  prompt_previous: boolean;
  /** The N best texts of this beam search (each one vote); default 1, at most 16. */
  num_hypotheses?: number;
}

export interface RefineSpan {
  start: number;
  end: number;
  text: string;
  language: string | null;
  /** Texts to score besides the decodes' hypotheses (e.g. an LLM's proposals); they come back with votes 0. */
  candidates?: string[];
}

export interface RefineParams {
  audio_path: string;
  model: ModelSpec;
  language: string;
  spans: RefineSpan[];
  decodes: RefineDecode[];
  pad_s: number;
  hotwords: string | null;
  max_duration_s: number | null;
}

export interface RefineHypothesis {
  text: string;
  /** Mean token log-probability of the text given the span's audio; null when it could not be scored. */
  score: number | null;
  /** How many of the decodes produced this text (0: a span candidate no decode produced). */
  votes: number;
}

export interface RefineSpanResult {
  current_score: number | null;
  hypotheses: RefineHypothesis[];
  /** Each decode's distinct texts, best first, in the order of `decodes` (absent from an older engine). */
  decoded?: string[][];
}

export interface RefineResult {
  spans: RefineSpanResult[];
}
