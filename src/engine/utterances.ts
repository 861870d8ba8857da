// The engine's segments (seconds) → the API's utterances (integer milliseconds): the first step after recognition,
// shared by the pipeline and diarization.

import { fromWhisperLanguage } from "../domain/languages.js";
import type { Utterance, Word } from "../domain/utterance.js";
import type { EngineSegment } from "./protocol.js";

const ms = (s: number): number => Math.max(0, Math.round(s * 1000));

export function toUtterances(segments: EngineSegment[], opts: { wordTimestamps: boolean; spk?: number }): Utterance[] {
  const out: Utterance[] = [];
  for (const seg of segments) {
    const msg = seg.text.trim();
    if (!msg) continue;
    const start = ms(seg.start);
    const end = Math.max(start, ms(seg.end));
    const u: Utterance = {
      start_at: start,
      duration: end - start,
      msg,
      spk: opts.spk ?? 0,
      lang: fromWhisperLanguage(seg.language),
    };
    if (opts.wordTimestamps) u.words = toWords(seg, start, end);
    out.push(u);
  }
  return out.sort((a, b) => a.start_at - b.start_at);
}

/** Words clipped into their utterance's bounds, so a client can rely on containment. */
function toWords(seg: EngineSegment, start: number, end: number): Word[] {
  const words: Word[] = [];
  for (const w of seg.words ?? []) {
    const text = w.text.trim();
    if (!text) continue;
    const ws = Math.min(Math.max(ms(w.start), start), end);
    const we = Math.min(Math.max(ms(w.end), ws), end);
    words.push({ start_at: ws, duration: we - ws, text });
  }
  return words;
}
