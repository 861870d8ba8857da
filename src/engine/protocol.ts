// Types of the engine's JSON-lines protocol; docs/engine.md is the reference.

export interface ModelSpec {
  path: string;
  device: "cpu" | "cuda" | "auto";
  compute_type: string;
  beam_size: number;
  cpu_threads: number;
  /** Batched passes of the model a batch engine runs at once, on one copy of its weights (src/engine/layout.ts). */
  inter_threads?: number;
  vad: boolean;
  /** The engine's decoding options: `preset` (the registry entry's name) and fields that override it
   * (engine/sori_engine/decode_options.py; docs/engine.md, "Decoding options"). */
  decode?: Record<string, number | string>;
}

export interface TranscribeParams {
  audio_path: string;
  model: ModelSpec;
  language_mode: "fixed" | "detect" | "multi";
  language: string | null;
  language_candidates: string[] | null;
  word_timestamps: boolean;
  initial_prompt: string | null;
  hotwords: string | null;
  max_duration_s: number | null;
  /** Decode this channel (0-based) alone instead of the mono downmix (docs/engine.md). */
  channel?: number;
  /** Emit a checkpoint event after each window (docs/engine.md, "Checkpoints"). */
  checkpoints?: boolean;
  /** The checkpoints an earlier request emitted, in order: the request continues after the last one. */
  resume_from?: EngineCheckpoint[];
}

/** What the engine emits after each window; opaque here except for where it stands. */
export interface EngineCheckpoint {
  /** The window (0, 1, 2, ...). */
  index: number;
  /** The file sample (16 kHz) where the next window starts. */
  offset_sample: number;
  [field: string]: unknown;
}

export interface EngineWord {
  start: number;
  end: number;
  text: string;
  probability: number;
}

export interface EngineSegment {
  start: number;
  end: number;
  text: string;
  language: string;
  avg_logprob: number;
  no_speech_prob: number;
  words?: EngineWord[];
}

export interface TranscribeResult {
  duration_s: number;
  language: string;
  language_probs: Record<string, number>;
  segments: EngineSegment[];
}

/** `diarize` (docs/engine.md): who spoke when, from the audio alone. */
export interface DiarizeParams {
  audio_path: string;
  /** 0: estimate the number of speakers; n > 0: exactly min(n, what the audio allows). */
  spk_count: number;
  max_duration_s: number | null;
}

export interface DiarizeResult {
  duration_s: number;
  num_speakers: number;
  /** Sorted, non-overlapping; `speaker` is 0..num_speakers-1 in order of first appearance. */
  turns: { start: number; end: number; speaker: number }[];
}

/** `voiceprint` (docs/engine.md): one speaker embedding per voice, each voice from one or more parts of files. */
export interface VoiceprintPart {
  audio_path: string;
  /** This channel alone (0-based) instead of the mono downmix. */
  channel?: number;
  /** Only these [start, end] seconds, taken as speech; absent: the part's speech is found as diarization finds it. */
  spans?: [number, number][];
}

export interface VoiceprintParams {
  voices: { parts: VoiceprintPart[] }[];
  /** Also estimate how many voices each voice's speech holds (an enrollment must hold one). */
  count_voices?: boolean;
  /** Also print each voice as a phone line passes its speech (`embedding_phone`; enrollments). */
  phone_prints?: boolean;
  max_duration_s: number | null;
}

export interface VoiceprintResult {
  /** The embedding model and recipe: voiceprints of different models are never compared. */
  model: string;
  voices: {
    speech_s: number;
    /** Unit-norm; null when the voice had no speech long enough to embed. */
    embedding: number[] | null;
    /** Every file of the voice is narrowband (a phone call, by its spectrum). */
    narrowband?: boolean;
    /** With `phone_prints`: the voice as heard on the phone (a narrowband voice's own print); null without speech. */
    embedding_phone?: number[] | null;
    voices?: number;
  }[];
}

/** `redact_audio` (docs/engine.md): a 16 kHz 16-bit PCM WAV copy of a file, a channel per track, each track's spans
 * silenced or beeped (the redacted audio of docs/pii.md). */
export interface RedactAudioParams {
  audio_path: string;
  /** A fresh spool file of the worker's; the engine refuses to overwrite a file. */
  out_path: string;
  mode: "silence" | "beep";
  /** `channel` null: the mono downmix. Spans in seconds; `transcribed`: the track's words, so that the speech
   * beside a span that no word vouches for is covered too (absent: the spans only). */
  tracks: { channel: number | null; spans: [number, number][]; transcribed?: [number, number][] }[];
  max_duration_s: number | null;
}

export interface RedactAudioResult {
  duration_s: number;
  channels: number;
  /** Seconds overwritten, over all tracks. */
  covered_s: number;
}

export interface ProbeResult {
  format: string;
  duration_s: number | null;
  channels: number;
  sample_rate: number;
}

// The codes are registered in src/errors.ts, beside the HTTP codes.
import type { EngineErrorCode } from "../errors.js";

export type { EngineErrorCode } from "../errors.js";

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
  }
}
