// Wire types of sori's API: the spec's config, read body and errors, and sori's extras.

/** The spec's config object (every field optional), plus sori's `callback_url` and `use_pii_redaction`. */
export interface TranscribeConfig {
  model_name?: "sommers" | "whisper";
  /** ko, ja; with whisper also detect, multi or any ISO 639-1 code Whisper knows (e.g. "en"). */
  language?: "ko" | "ja" | "detect" | "multi" | (string & {});
  /** whisper only; default ["ko","ja","zh","en"] with detect/multi. */
  language_candidates?: string[];
  use_diarization?: boolean;
  /** Only with use_diarization true (400 H0001 otherwise, as the real service). */
  diarization?: { spk_count?: number };
  use_multi_channel?: boolean;
  use_itn?: boolean;
  use_disfluency_filter?: boolean;
  use_profanity_filter?: boolean;
  use_paragraph_splitter?: boolean;
  paragraph_splitter?: { max?: number };
  domain?: "GENERAL" | "CALL";
  use_word_timestamp?: boolean;
  keywords?: string[];
  use_refinement?: boolean;
  use_insight?: boolean;
  insight?: { prompt?: string };
  /** sori only: POSTed {id, status} when the job is final (docs/extras.md). */
  callback_url?: string;
  /** sori only: personal data masked in every output (docs/pii.md); best effort. */
  use_pii_redaction?: boolean;
  /** sori only, with use_pii_redaction true: the types (default all) and how they are written (default mask). */
  pii_redaction?: {
    types?: ("phone" | "card" | "account" | "national_id" | "email" | "dob" | "address" | "name")[];
    mode?: "mask" | "asterisks" | "hash";
  };
  /** sori only, with use_diarization or use_multi_channel where the server enables it: name the speakers who match
   * the client's enrolled voices (docs/speakers.md); an empty list means all of them. */
  speaker_identification?: { speakers?: string[] };
}

export interface Word {
  start_at: number;
  duration: number;
  text: string;
}

export interface Utterance {
  /** Milliseconds. */
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
  /** Always "NORMAL" in a read response, as the real service sends it; absent in stored results. */
  spk_type?: string;
  /** sori only: the enrolled speaker's name, when the job asked for speaker_identification and the voice matched. */
  spk_name?: string;
  lang: string;
  words?: Word[];
}

export interface InsightItem {
  title: string;
  summary: string;
  category: string;
}

export type TranscribeResult =
  | { id: string; status: "transcribing"; refine_status?: string }
  | {
      id: string;
      status: "completed";
      results?: { utterances: Utterance[]; insight?: InsightItem[] };
      refine_status?: "queued" | "processing" | "completed" | "failed";
      refine_error?: { code: string };
    }
  | { id: string; status: "failed"; error: { code: string; message: string } };

export interface Token {
  access_token: string;
  /** Epoch seconds. */
  expire_at: number;
}

export type ExportFormat = "srt" | "vtt" | "txt";

export interface JobListItem {
  id: string;
  status: "transcribing" | "completed" | "failed";
  created_at: string;
  finished_at: string | null;
  expires_at: string | null;
  expired: boolean;
  audio_duration_ms: number | null;
  error?: { code: string };
}

export interface JobList {
  transcribes: JobListItem[];
  next_cursor: string | null;
}
