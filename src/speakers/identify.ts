// The pipeline stage of known speakers: each diarized speaker (or channel) of a job is embedded from its own speech
// and matched against the client's enrolled voices (match.ts); the utterances of a matched speaker gain `spk_name`.
// `spk` is left as it is.
import type { Utterance } from "../domain/utterance.js";
import type { Engine } from "../engine/client.js";
import { type Enrolled, matchSpeakers } from "./match.js";
import type { SpeakerOptions } from "./options.js";

export interface KnownVoice extends Enrolled {
  model: string;
}

type Span = [number, number];

export interface Turn {
  start: number;
  end: number;
  speaker: number;
}

/** Each utterance speaker's speech for its voiceprint, in seconds: the diarization turns of the engine speaker that
 * holds most of its utterances (the utterances' `spk` is the turns' speaker renumbered), less every stretch where
 * another speaker's turn overlaps (overlapped speech is no one's voice alone). */
export function diarizedSpans(utterances: readonly Utterance[], turns: readonly Turn[]): Map<number, Span[]> {
  const votes = new Map<number, Map<number, number>>();
  for (const u of utterances) {
    const a = u.start_at / 1000;
    const b = (u.start_at + u.duration) / 1000;
    for (const t of turns) {
      const ov = Math.min(b, t.end) - Math.max(a, t.start);
      if (ov <= 0) continue;
      const v = votes.get(u.spk) ?? new Map<number, number>();
      v.set(t.speaker, (v.get(t.speaker) ?? 0) + ov);
      votes.set(u.spk, v);
    }
  }
  const out = new Map<number, Span[]>();
  for (const [spk, v] of votes) {
    const engineSpk = [...v].sort((x, y) => y[1] - x[1])[0]![0];
    const own = turns.filter((t) => t.speaker === engineSpk).map((t): Span => [t.start, t.end]);
    const others = turns.filter((t) => t.speaker !== engineSpk).map((t): Span => [t.start, t.end]);
    out.set(spk, subtract(own, others));
  }
  return out;
}

/** Each channel's speech (multi-channel jobs: `spk` is the channel): its utterances' spans, in seconds. */
export function channelSpans(utterances: readonly Utterance[]): Map<number, Span[]> {
  const out = new Map<number, Span[]>();
  for (const u of utterances) {
    out.set(u.spk, [...(out.get(u.spk) ?? []), [u.start_at / 1000, (u.start_at + u.duration) / 1000]]);
  }
  return out;
}

/** `spans` less every part covered by `cut`. */
export function subtract(spans: readonly Span[], cut: readonly Span[]): Span[] {
  const out: Span[] = [];
  const sortedCut = [...cut].sort((x, y) => x[0] - y[0]);
  for (const [s0, e] of spans) {
    let s = s0;
    for (const [a, b] of sortedCut) {
      if (b <= s || a >= e) continue;
      if (a > s) out.push([s, a]);
      s = Math.max(s, b);
      if (s >= e) break;
    }
    if (s < e) out.push([s, e]);
  }
  return out;
}

export interface IdentifyInput {
  audioPath: string;
  /** Per utterance speaker, its speech (seconds); with `channels`, each speaker is that channel of the file. */
  spans: Map<number, Span[]>;
  channels: boolean;
  known: readonly KnownVoice[];
  maxAudioS: number;
}

/** The utterances, those of matched speakers with `spk_name`. Voices of another model than the engine's are never
 * compared (the service refuses such a job at submit; this guards a model changed in between: they are skipped). */
export async function identifySpeakers(
  utterances: Utterance[],
  input: IdentifyInput,
  engine: Engine,
  opts: SpeakerOptions,
  timeoutMs: number,
): Promise<Utterance[]> {
  const keys = [...input.spans.keys()].sort((a, b) => a - b);
  if (keys.length === 0 || input.known.length === 0) return utterances;
  const result = await engine.voiceprint(
    {
      voices: keys.map((spk) => ({
        parts: [
          { audio_path: input.audioPath, spans: input.spans.get(spk)!, ...(input.channels ? { channel: spk } : {}) },
        ],
      })),
      max_duration_s: input.maxAudioS,
    },
    { timeoutMs },
  );
  const comparable = input.known.filter((k) => k.model === result.model);
  const clusters = keys.map((key, i) => ({
    key,
    embedding: result.voices[i]?.embedding ?? null,
    speechS: result.voices[i]?.speech_s ?? 0,
  }));
  const names = new Map(matchSpeakers(clusters, comparable, opts).map((m) => [m.key, m.name]));
  return utterances.map((u) => (names.has(u.spk) ? { ...u, spk_name: names.get(u.spk)! } : u));
}
