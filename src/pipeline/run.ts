// The whole pipeline of one job, as plain data in → plain data out: config + audio file → the `results` body.
// The worker and `sori transcribe` both call this; neither knows what the stages are.
import type { Engine } from "../engine/client.js";
import { toWhisperLanguage, WHISPER_LANGUAGES } from "../engine/languages.js";
import type { ModelRegistry } from "../engine/models.js";
import type { TranscribeParams } from "../engine/protocol.js";
import type { JobConfig } from "../jobs/jobConfig.js";
import { toUtterances, type Utterance } from "./utterances.js";

export interface PipelineInput {
  config: JobConfig;
  audioPath: string;
  maxAudioS: number;
}

export interface PipelineDeps {
  engine: Engine;
  models: ModelRegistry;
  /** Engine time budget per second of audio (a hung engine is killed after it). */
  timeoutFactor: number;
  onProgress?: (fraction: number) => void;
}

export interface JobResults {
  utterances: Utterance[];
}

export function engineParams(config: JobConfig, audioPath: string, models: ModelRegistry, maxAudioS: number): TranscribeParams {
  const fixed = config.language === "ko" || config.language === "ja";
  return {
    audio_path: audioPath,
    model: models[config.model_name],
    language_mode: fixed ? "fixed" : config.language === "detect" ? "detect" : "multi",
    language: fixed ? config.language : null,
    // Without candidates, all languages that have an ISO 639-1 code: Whisper could otherwise answer `haw`.
    language_candidates: fixed ? null : (config.language_candidates ?? [...WHISPER_LANGUAGES]).map(toWhisperLanguage),
    word_timestamps: config.use_word_timestamp,
    initial_prompt: null,
    hotwords: null,
    max_duration_s: maxAudioS,
  };
}

export async function runPipeline(input: PipelineInput, deps: PipelineDeps, audioSeconds: number | null): Promise<JobResults> {
  const params = engineParams(input.config, input.audioPath, deps.models, input.maxAudioS);
  const budgetS = audioSeconds ?? input.maxAudioS;
  const raw = await deps.engine.transcribe(params, {
    onProgress: deps.onProgress,
    timeoutMs: Math.round((120 + budgetS * deps.timeoutFactor) * 1000),
  });
  const utterances = toUtterances(raw.segments, { wordTimestamps: input.config.use_word_timestamp });
  return { utterances };
}
