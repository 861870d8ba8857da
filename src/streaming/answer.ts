// An engine streaming event → the RTZR answer a client reads: `{seq, start_at, duration, final, alternatives}`.
// The text goes through the batch path's text stages (src/text: disfluency, ITN, keywords, profanity), so a final
// reads as the same audio's batch transcript would; interims get the same stages (they are cheap).

import type { StreamEvent } from "../engine/streamProtocol.js";
import { toUtterances } from "../engine/utterances.js";
import { applyTextOptions } from "../text/index.js";
import type { StreamQuery } from "./query.js";

export interface StreamAnswer {
  seq: number;
  start_at: number;
  duration: number;
  final: boolean;
  alternatives: { text: string; confidence: number }[];
}

/** Sentence punctuation Whisper writes; `use_punctuation=false` (the clients' default) leaves it out. */
const PUNCTUATION = /[.,?!;:。、？！，．・…]+/gu;

const UNSPACED = new Set(["ja", "zh", "th"]);

export function toAnswer(event: StreamEvent, seq: number, q: StreamQuery): StreamAnswer {
  const recognized = toUtterances(event.segments, { wordTimestamps: false });
  const done = applyTextOptions(recognized, {
    use_itn: q.use_itn,
    use_disfluency_filter: q.use_disfluency_filter,
    use_profanity_filter: q.use_profanity_filter,
    use_paragraph_splitter: false,
    paragraph_splitter: { max: 50 },
    use_word_timestamp: false,
    keywords: q.keywords?.map((k) => k.word),
  });
  let text = done.map((u) => u.msg).join(UNSPACED.has(q.language) ? "" : " ");
  if (!q.use_punctuation) text = text.replace(PUNCTUATION, " ");
  text = text.replace(/\s{2,}/gu, " ").trim();
  const start = Math.round(event.start * 1000);
  return {
    seq,
    start_at: start,
    duration: Math.max(0, Math.round(event.end * 1000) - start),
    final: event.final,
    alternatives: [{ text, confidence: confidence(event) }],
  };
}

/** The decoder's mean token probability over the segments (exp of the mean log-probability), 0..1. */
function confidence(event: StreamEvent): number {
  const scores = event.segments.map((s) => s.avg_logprob).filter((v): v is number => typeof v === "number");
  if (scores.length === 0) return 0;
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  return Math.round(Math.min(1, Math.max(0, Math.exp(mean))) * 1000) / 1000;
}
