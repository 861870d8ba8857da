// The pipeline stage of known speakers: each diarized speaker (or channel) of a job, and each of its utterances, is
// embedded from its own speech and matched against the client's enrolled voices (match.ts); a named utterance gains
// `spk_name`. `spk` is left as it is.
import type { Utterance } from "../domain/utterance.js";
import type { Engine } from "../engine/client.js";
import { type Enrolled, nameUtterances } from "./match.js";
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

/** Each utterance's own speech (seconds): its span within its speaker's speech (`spans`, overlaps already removed). */
export function utteranceSpans(utterances: readonly Utterance[], spans: Map<number, Span[]>): Span[][] {
  return utterances.map((u) => {
    const a = u.start_at / 1000;
    const b = (u.start_at + u.duration) / 1000;
    return (spans.get(u.spk) ?? []).map(([s, e]): Span => [Math.max(s, a), Math.min(e, b)]).filter(([s, e]) => e > s);
  });
}

/** The utterances, those named after an enrolled voice with `spk_name` (match.ts: each speaker matched, then each
 * utterance checked against its own audio). Voices of another model than the engine's are never compared (the service
 * refuses such a job at submit; this guards a model changed in between: they are skipped). */
export async function identifySpeakers(
  utterances: Utterance[],
  input: IdentifyInput,
  engine: Engine,
  opts: SpeakerOptions,
  request: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<Utterance[]> {
  const keys = [...input.spans.keys()].sort((a, b) => a - b);
  if (keys.length === 0 || input.known.length === 0) return utterances;
  const own = utteranceSpans(utterances, input.spans);
  const checked = own.map((sp, i) => (sp.length > 0 ? i : -1)).filter((i) => i >= 0);
  const part = (spk: number, spans: Span[]) => ({
    parts: [{ audio_path: input.audioPath, spans, ...(input.channels ? { channel: spk } : {}) }],
  });
  const result = await engine.voiceprint(
    {
      voices: [
        ...keys.map((spk) => part(spk, input.spans.get(spk)!)),
        ...checked.map((i) => part(utterances[i]!.spk, own[i]!)),
      ],
      max_duration_s: input.maxAudioS,
    },
    request,
  );
  const comparable = input.known.filter((k) => k.model === result.model);
  const clusters = keys.map((key, i) => ({
    key,
    embedding: result.voices[i]?.embedding ?? null,
    speechS: result.voices[i]?.speech_s ?? 0,
    narrowband: result.voices[i]?.narrowband === true,
  }));
  const voices = utterances.map((u) => ({
    cluster: u.spk,
    embedding: null as number[] | null,
    speechS: 0,
    narrowband: false,
  }));
  checked.forEach((i, j) => {
    const v = result.voices[keys.length + j];
    voices[i] = {
      cluster: utterances[i]!.spk,
      embedding: v?.embedding ?? null,
      speechS: v?.speech_s ?? 0,
      narrowband: v?.narrowband === true,
    };
  });
  const names = nameUtterances(clusters, voices, comparable, opts);
  return utterances.map((u, i) => (names[i] ? { ...u, spk_name: names[i]!.name } : u));
}
