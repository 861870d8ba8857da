// The whole pipeline of one job, as plain data in → plain data out: config + audio file → the `results` body.
// The worker and `sori transcribe` both reach it through runJobPipeline (job.ts); neither knows what the stages are.

import { randomBytes } from "node:crypto";
import { speakerUtterances } from "../diarization/index.js";
import { isFixedLanguage, type JobConfig, piiAudioMode, piiOptions } from "../domain/jobConfig.js";
import { toWhisperLanguage, WHISPER_LANGUAGES } from "../domain/languages.js";
import type { Utterance } from "../domain/utterance.js";
import type { Engine } from "../engine/client.js";
import type { ModelRegistry } from "../engine/models.js";
import type { TranscribeParams } from "../engine/protocol.js";
import { toUtterances } from "../engine/utterances.js";
import { timeStage } from "../metrics/index.js";
import { type SaidInAudio, transcribedSpans } from "../pii/audio.js";
import { type Redaction, redactWithTimes } from "../pii/index.js";
import { channelSpans, diarizedSpans, identifySpeakers, type KnownVoice, SPEAKER_OPTIONS } from "../speakers/index.js";
import { applyTextOptions, decoderHints, needsWords } from "../text/index.js";
import { transcribeChannels } from "./channels.js";
import { type Checkpoints, resumable } from "./checkpoints.js";

export interface PipelineInput {
  config: JobConfig;
  audioPath: string;
  maxAudioS: number;
  /** The voices a `speaker_identification` job may name (the worker reads the job's client's from the store). */
  knownSpeakers?: readonly KnownVoice[];
}

export type { Checkpoints } from "./checkpoints.js";

export interface PipelineDeps {
  engine: Engine;
  models: ModelRegistry;
  /** Engine time budget per second of audio (a hung engine is killed after it). */
  timeoutFactor: number;
  onProgress?: (fraction: number) => void;
  /** Where the worker keeps the engine's checkpoints; absent outside a worker (`sori transcribe`). */
  checkpoints?: Checkpoints;
  /** Passed to every engine request: aborting it ends them at once (a worker whose task is no longer its own). */
  signal?: AbortSignal;
}

export interface JobResults {
  utterances: Utterance[];
}

export function engineParams(
  config: JobConfig,
  audioPath: string,
  models: ModelRegistry,
  maxAudioS: number,
): TranscribeParams {
  const fixed = isFixedLanguage(config.language);
  return {
    audio_path: audioPath,
    // domain CALL (telephone audio) decodes without the VAD (best CER on 8 kHz clips); the engine's hallucination
    // stage drops what that lets the decoder invent on line noise. Measurements: docs/text.md, docs/models.md.
    model: config.domain === "CALL" ? { ...models[config.model_name], vad: false } : models[config.model_name],
    language_mode: fixed ? "fixed" : config.language === "detect" ? "detect" : "multi",
    language: fixed ? toWhisperLanguage(config.language) : null,
    // Without candidates (a config stored before they defaulted), all languages that have an ISO 639-1 code:
    // Whisper could otherwise answer `haw`.
    language_candidates: fixed ? null : (config.language_candidates ?? [...WHISPER_LANGUAGES]).map(toWhisperLanguage),
    // Diarization assigns each word to a speaker, so it needs the words even when the client did not ask for them.
    word_timestamps: needsWords(config) || config.use_diarization,
    ...decoderHints(config),
    max_duration_s: maxAudioS,
  };
}

/** Recognition, the text stages and, when the job asks for it, the redaction of personal data (docs/pii.md): the
 * last stage, so that everything made from the utterances afterwards (insight, exports, refinement) sees only
 * redacted text. */
export async function runPipeline(
  input: PipelineInput,
  deps: PipelineDeps,
  audioSeconds: number | null,
): Promise<JobResults> {
  return (await runPipelineSaid(input, deps, audioSeconds)).results;
}

/** `runPipeline`, and where the redacted spans were said when the job asked for a redacted copy of the audio
 * (`pii_redaction.audio`; null otherwise). That copy needs every span's word times, so such a job is recognized
 * with word times whatever it asked for; the words are dropped again after the redaction unless it wanted them. */
export async function runPipelineSaid(
  input: PipelineInput,
  deps: PipelineDeps,
  audioSeconds: number | null,
): Promise<{ results: JobResults; said: SaidInAudio | null }> {
  const redaction = jobRedaction(input.config);
  const audio = piiAudioMode(input.config) !== null;
  const recognizing = audio ? { ...input, config: { ...input.config, use_word_timestamp: true } } : input;
  const results = await recognize(recognizing, deps, audioSeconds);
  if (!redaction) return { results, said: null };
  const { utterances, said } = await timeStage("pii", () => redactWithTimes(results.utterances, redaction));
  const asked = input.config.use_word_timestamp ? utterances : utterances.map(({ words: _, ...u }) => u);
  return {
    results: { utterances: asked },
    said: audio ? { redacted: said, transcribed: transcribedSpans(utterances) } : null,
  };
}

/** The job's redaction, with a key of its own for the `hash` mode (kept in memory for this run only); null when the
 * job did not ask for one. */
export function jobRedaction(config: JobConfig): Redaction | null {
  const options = piiOptions(config);
  return options ? { ...options, key: randomBytes(32) } : null;
}

async function recognize(input: PipelineInput, deps: PipelineDeps, audioSeconds: number | null): Promise<JobResults> {
  const params = engineParams(input.config, input.audioPath, deps.models, input.maxAudioS);
  const budgetS = audioSeconds ?? input.maxAudioS;
  if (input.config.use_multi_channel) {
    // A channel per speaker: transcribed channel by channel, spk = channel index, no diarization (so no words
    // are needed for it).
    const recognized = await timeStage("transcribe", () =>
      transcribeChannels(
        deps.engine,
        { ...params, word_timestamps: needsWords(input.config) },
        {
          wordTimestamps: needsWords(input.config),
          timeoutMs: Math.round((120 + budgetS * deps.timeoutFactor) * 1000),
          onProgress: deps.onProgress,
          checkpoints: deps.checkpoints,
          signal: deps.signal,
        },
      ),
    );
    const utterances = await timeStage("text", () => applyTextOptions(recognized, input.config));
    return { utterances: await nameSpeakers(utterances, input, deps, budgetS, () => channelSpans(utterances), true) };
  }
  const diarizing = input.config.use_diarization;
  const onProgress = deps.onProgress;
  // Diarization reads the audio, not the words: it runs beside the recognition, so that a diarized call alone has
  // work for every core of the engine (docs/performance.md, "One engine for the host"). It is stopped when the
  // recognition fails.
  const stopDiarize = new AbortController();
  const diarizeSignal = deps.signal ? AbortSignal.any([deps.signal, stopDiarize.signal]) : stopDiarize.signal;
  const diarized = diarizing
    ? timeStage("diarize", () =>
        deps.engine.diarize(
          {
            audio_path: input.audioPath,
            spk_count: input.config.diarization.spk_count,
            max_duration_s: input.maxAudioS,
          },
          { timeoutMs: Math.round((60 + budgetS * deps.timeoutFactor) * 1000), signal: diarizeSignal },
        ),
      )
    : null;
  diarized?.catch(() => {}); // awaited below, or dropped with the recognition's failure
  let raw: Awaited<ReturnType<Engine["transcribe"]>>;
  try {
    // Stage timings feed /metrics; "transcribe" is the engine's whole request (decode, VAD and recognition).
    const request = await resumable(params, deps.checkpoints, 0);
    raw = await timeStage("transcribe", () =>
      deps.engine.transcribe(request.params, {
        ...(request.onCheckpoint ? { onCheckpoint: request.onCheckpoint } : {}),
        // When diarizing, recognition is about 90 % of the work; the diarize op takes the rest.
        onProgress: onProgress && diarizing ? (f) => onProgress(0.9 * f) : onProgress,
        timeoutMs: Math.round((120 + budgetS * deps.timeoutFactor) * 1000),
        signal: deps.signal,
      }),
    );
  } catch (err) {
    stopDiarize.abort();
    throw err;
  }
  const wordTimestamps = needsWords(input.config);
  let recognized: Utterance[];
  let turns: { start: number; end: number; speaker: number }[] = [];
  if (diarized) {
    ({ turns } = await diarized);
    recognized = speakerUtterances(raw.segments, turns, { wordTimestamps });
  } else {
    recognized = toUtterances(raw.segments, { wordTimestamps });
  }
  const utterances = await timeStage("text", () => applyTextOptions(recognized, input.config));
  if (!diarizing) return { utterances };
  return {
    utterances: await nameSpeakers(utterances, input, deps, budgetS, () => diarizedSpans(utterances, turns), false),
  };
}

/** Known speakers (docs/speakers.md), when the job asks for them: each diarized speaker or channel matched against
 * the client's enrolled voices; a matched speaker's utterances gain `spk_name`. */
async function nameSpeakers(
  utterances: Utterance[],
  input: PipelineInput,
  deps: PipelineDeps,
  budgetS: number,
  spans: () => Map<number, [number, number][]>,
  channels: boolean,
): Promise<Utterance[]> {
  if (!input.config.speaker_identification || !input.knownSpeakers?.length) return utterances;
  const known = input.knownSpeakers;
  return timeStage("speakers", () =>
    identifySpeakers(
      utterances,
      { audioPath: input.audioPath, spans: spans(), channels, known, maxAudioS: input.maxAudioS },
      deps.engine,
      SPEAKER_OPTIONS,
      { timeoutMs: Math.round((60 + budgetS * deps.timeoutFactor) * 1000), signal: deps.signal },
    ),
  );
}
