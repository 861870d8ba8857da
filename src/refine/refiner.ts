// Audio-grounded refinement of a completed job's utterances: each utterance's span is decoded again by the engine
// on its own (the refinement model, the N best texts of a beam search, the job's keywords as hotwords), every
// hypothesis and the current text are scored on that span's audio, and a hypothesis replaces the text only where
// it scores clearly better (select.ts). Times, speakers and languages are kept as
// they are; the text options the job asked for (ITN, filters) are applied to a replacement as to the base text.
import type { Config } from "../config.js";
import type { JobConfig } from "../domain/jobConfig.js";
import { toWhisperLanguage } from "../domain/languages.js";
import type { Utterance } from "../domain/utterance.js";
import type { Engine } from "../engine/client.js";
import type { ModelSpec } from "../engine/protocol.js";
import type { RefineDecode, RefineParams, RefineResult } from "../engine/refineProtocol.js";
import { applyTextOptions, filterRemovesWords } from "../text/index.js";
import { takesNeighbourWords } from "./neighbours.js";
import { DEFAULT_SELECT, type SelectOptions, selectHypothesis } from "./select.js";

export interface RefinerSettings {
  model: ModelSpec;
  decodes: RefineDecode[];
  /** Audio kept on each side of an utterance when it is cut out (seconds). */
  padS: number;
  select: SelectOptions;
}

/** N-best rescoring on the utterance's own audio (docs/enterprise.md, "Refinement"). */
export function defaultRefinerSettings(model: ModelSpec): RefinerSettings {
  return {
    model,
    // The 5 best texts of one beam-5 search over the utterance's span, each scored by teacher forcing on that
    // span (with the current text), the best replacing the text when it scores 0.05 better. The base pass decoded
    // the file with other context and settings, so its text is not always the span's best-scoring one.
    // Measured against two agreeing decodes (beam 8 patience 2, beam 5 with the previous utterance as prompt):
    // those changed nothing; an LLM's score added to the acoustic one did not do better (bench/refine-nbest.ts).
    decodes: [{ beam_size: 5, patience: 1, prompt_previous: false, num_hypotheses: 5 }],
    padS: 0.3,
    select: DEFAULT_SELECT,
  };
}

/** The refinement configuration of a deployment, or null when it does not refine (SORI_REFINE=0). */
export function refinerFromConfig(config: Config): RefinerSettings | null {
  if (!config.refine.enabled) return null;
  return defaultRefinerSettings({
    path: config.refine.modelPath,
    device: config.refine.device,
    compute_type: config.refine.computeType,
    beam_size: 5,
    cpu_threads: 0,
    vad: false,
  });
}

export interface RefineDeps {
  engine: Engine;
  settings: RefinerSettings;
  maxAudioS: number;
  timeoutMs: number;
  onProgress?: (fraction: number) => void;
}

export interface RefineOutcome {
  utterances: Utterance[];
  changed: number;
}

export function refineParams(
  utterances: readonly Utterance[],
  config: JobConfig,
  audioPath: string,
  deps: RefineDeps,
): RefineParams {
  const keywords = config.keywords?.filter((k) => k.trim().length > 0) ?? [];
  const fallback =
    config.language === "ko" || config.language === "ja" ? config.language : (utterances[0]?.lang ?? "ko");
  return {
    audio_path: audioPath,
    model: deps.settings.model,
    language: toWhisperLanguage(fallback),
    spans: utterances.map((u) => ({
      start: u.start_at / 1000,
      end: (u.start_at + u.duration) / 1000,
      text: u.msg,
      language: u.lang ? toWhisperLanguage(u.lang) : null,
    })),
    decodes: deps.settings.decodes,
    // A symmetric pad, even into a neighbour's speech: padding only up to the middle of the gap was measured and
    // raised en CER (0.061 -> 0.068): whisper invents text on the short spans it leaves (docs/enterprise.md).
    pad_s: deps.settings.padS,
    hotwords: keywords.length > 0 ? keywords.join(", ") : null,
    max_duration_s: deps.maxAudioS,
  };
}

export async function refineUtterances(
  utterances: readonly Utterance[],
  config: JobConfig,
  audioPath: string,
  deps: RefineDeps,
): Promise<RefineOutcome> {
  if (utterances.length === 0) return { utterances: [], changed: 0 };
  const result = await deps.engine.refine(refineParams(utterances, config, audioPath, deps), {
    onProgress: deps.onProgress,
    timeoutMs: deps.timeoutMs,
  });
  return applyRefinement(utterances, result, config, deps.settings.select, deps.settings.decodes.length);
}

/** The refined utterances from the engine's scores: each one's text replaced only by an accepted hypothesis. */
export function applyRefinement(
  utterances: readonly Utterance[],
  result: RefineResult,
  config: JobConfig,
  select: SelectOptions,
  decodes: number,
): RefineOutcome {
  if (result.spans.length !== utterances.length) {
    throw new Error(`engine refined ${result.spans.length} spans for ${utterances.length} utterances`);
  }
  let changed = 0;
  const out = utterances.map((u, i) => {
    const span = result.spans[i]!;
    const tooShort = u.duration < (select.minUtteranceS ?? 0) * 1000;
    const [previous, next] = [utterances[i - 1]?.msg ?? null, utterances[i + 1]?.msg ?? null];
    // A hypothesis that spells out fillers the job's filter removes ("we hope that um, next year") is scored on
    // words the current text was filtered of: its better score can be the fillers', and what would replace the
    // text is another sentence (mu-law en: "I hope" -> "we hope"). It is not compared.
    const own = span.hypotheses.filter(
      (h) => !takesNeighbourWords(h.text, u.msg, previous, next) && !filterRemovesWords(h.text, u.lang, config),
    );
    const pick = tooShort ? null : selectHypothesis(u.msg, span.current_score, own, select, decodes);
    const msg = pick ? finalText(pick.text, u, config) : null;
    if (!msg || msg === u.msg) return { ...u };
    changed += 1;
    // The base words belong to the old text: a replaced utterance is returned without them.
    const { words: _words, ...rest } = u;
    return { ...rest, msg };
  });
  return { utterances: out, changed };
}

/** The job's text options applied to one replacement text (no paragraph regrouping: the utterance stays one). */
export function finalText(text: string, u: Utterance, config: JobConfig): string | null {
  const [done] = applyTextOptions(
    [{ start_at: u.start_at, duration: u.duration, msg: text, spk: u.spk, lang: u.lang }],
    {
      ...config,
      use_paragraph_splitter: false,
      use_word_timestamp: false,
    },
  );
  const msg = done?.msg.trim();
  return msg ? msg : null;
}
