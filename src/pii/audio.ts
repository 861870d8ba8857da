// The redacted copy of the audio (`pii_redaction.audio`, docs/pii.md): which stretches of which channel the engine
// overwrites. A plain function of where the redacted spans were said and where the transcript's words are; the
// engine's `redact_audio` op does the rest, covering too the speech beside a redacted span that no word vouches for.
import { AUDIO_MARGIN_MS } from "../domain/pii.js";
import type { Utterance } from "../domain/utterance.js";
import type { SaidSpan } from "./index.js";

/** What the copy needs of a job's transcript: where the redacted spans were said, and where each of its words was
 * (what the text vouches for). */
export interface SaidInAudio {
  redacted: SaidSpan[];
  transcribed: SaidSpan[];
}

export interface AudioTrack {
  /** null: the file's mono downmix (what a job without use_multi_channel transcribed). */
  channel: number | null;
  /** Seconds, sorted, not overlapping. */
  spans: [number, number][];
  /** Seconds: the track's words, as timed. */
  transcribed: [number, number][];
}

/** Each word's span (each utterance's, where it has no words), by speaker (the channel of a use_multi_channel job). */
export function transcribedSpans(utterances: readonly Utterance[]): SaidSpan[] {
  return utterances.flatMap((u) =>
    (u.words ?? [{ start_at: u.start_at, duration: u.duration }]).map((w) => ({
      spk: u.spk,
      start_ms: w.start_at,
      end_ms: w.start_at + w.duration,
    })),
  );
}

const seconds = (said: readonly SaidSpan[]): [number, number][] =>
  said.map((s) => [s.start_ms / 1000, s.end_ms / 1000] as [number, number]).sort((a, b) => a[0] - b[0]);

/** Spans widened by the margin each side (not before 0; the engine stops at the audio's end), overlaps merged. */
export function widen(said: readonly SaidSpan[], marginMs = AUDIO_MARGIN_MS): [number, number][] {
  const sorted = said
    .map((s) => [Math.max(0, s.start_ms - marginMs), s.end_ms + marginMs] as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged.map(([a, b]) => [a / 1000, b / 1000]);
}

/**
 * The tracks of the copy. Without use_multi_channel (`channels` null) the transcript is of the mono downmix, so the
 * copy is that downmix with every span covered. With it, each channel is a party of the call and was transcribed on
 * its own: the copy keeps the channels, each covered at its own party's spans only (`spk` is the channel).
 */
export function audioTracks(said: SaidInAudio, channels: number | null): AudioTrack[] {
  if (channels === null)
    return [{ channel: null, spans: widen(said.redacted), transcribed: seconds(said.transcribed) }];
  return Array.from({ length: Math.max(1, channels) }, (_, channel) => ({
    channel,
    spans: widen(said.redacted.filter((s) => s.spk === channel)),
    transcribed: seconds(said.transcribed.filter((s) => s.spk === channel)),
  }));
}
