// The engine's streaming ops (docs/engine.md, "Streaming"): a session per connection, held by the engine process.
import type { EngineSegment, TranscribeParams } from "./protocol.js";

export interface StreamOpenParams {
  session: string;
  /** Of the s16le mono PCM that stream_audio carries. */
  sample_rate: number;
  /** Seconds of non-speech after speech that end an utterance. */
  epd_time: number;
  /** A transcribe request's decoding settings, without the file: the final's (the interim is the same, beam 1). */
  decode: Omit<TranscribeParams, "audio_path" | "max_duration_s" | "channel">;
}

export interface StreamAudioParams {
  session: string;
  /** base64 of s16le mono PCM at the session's rate; may be empty. */
  pcm: string;
  /** Decode the open utterance as an interim when no final is due. */
  interim: boolean;
  /** Close the open utterance now (a client's Finalize). */
  finalize: boolean;
  /** The stream ends: the open utterance becomes a final and the session is closed. */
  finish: boolean;
}

export interface StreamEvent {
  final: boolean;
  /** Session seconds of the utterance's first speech frame, and of the audio received when this was decided. */
  speech_start: number;
  decided_at: number;
  /** Session time (seconds) of the decoded audio. */
  start: number;
  end: number;
  segments: EngineSegment[];
}

export interface StreamAudioResult {
  events: StreamEvent[];
  /** Seconds of audio the session has received, and of audio it holds undecided. */
  received_s: number;
  pending_s: number;
}

/** `stream_step`: one `stream_audio` for each of several sessions, decoded together (docs/engine.md). */
export interface StreamStepParams {
  steps: StreamAudioParams[];
}

export type StreamStepItem =
  | (StreamAudioResult & { session: string /** An interim was decoded for this session. */; interim: boolean })
  | { session: string | null; error: { code: string; msg: string } };

export interface StreamStepResult {
  /** One per step, in order. */
  results: StreamStepItem[];
  /** Wall seconds the step spent decoding interims (0 when it decoded none). */
  interim_s: number;
}
