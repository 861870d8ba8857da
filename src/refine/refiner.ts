// Audio-grounded refinement of a completed job's utterances: each utterance's span is decoded again by the engine
// on its own, several ways (the refinement model; beam search, greedy, the previous utterance as prompt; the job's
// keywords as hotwords), every decode's text and the current text are scored on that span's audio, and the text
// changes only where the decodes agree on the change (agree.ts), in the languages where that was measured not to
// make transcripts worse. Times, speakers and languages are kept as they are; the text options the job asked for
// (ITN, filters) are applied to a changed text as to the base text.
import type { Config } from "../config.js";
import type { JobConfig } from "../domain/jobConfig.js";
import { toWhisperLanguage } from "../domain/languages.js";
import type { Utterance } from "../domain/utterance.js";
import type { Engine } from "../engine/client.js";
import type { ModelSpec } from "../engine/protocol.js";
import type { RefineDecode, RefineParams, RefineResult, RefineSpanResult } from "../engine/refineProtocol.js";
import { applyTextOptions, filterRemovesWords } from "../text/index.js";
import { type AgreementOptions, agreedText } from "./agree.js";
import { takesNeighbourWords } from "./neighbours.js";
import { DEFAULT_SELECT, letters, type SelectOptions, selectHypothesis } from "./select.js";

/** How a change is chosen from the engine's decodes and scores. */
export interface RefineRule {
  /** Utterance languages (`lang`) refinement may change; the others keep their base text and are not decoded
   * again. null: every language. */
  languages: readonly string[] | null;
  /** Agreement of the decodes' best texts (agree.ts); null: the earlier rule, the best-scoring hypothesis (select.ts). */
  agree: AgreementOptions | null;
  /** The score rule's options, and the floor on utterance length both rules keep. */
  select: SelectOptions;
}

export interface RefinerSettings {
  model: ModelSpec;
  decodes: RefineDecode[];
  /** Audio kept on each side of an utterance when it is cut out (seconds). */
  padS: number;
  rule: RefineRule;
}

/** Refinement changes no language: the rule below, chosen on the development parts (two of three decodes agreeing on
 * an edit of at most 2 letters, each scoring 0.05 above the current text; numbers, Latin-script words and keywords
 * never changed), raised CER on the held-out parts of both ko and ja, so the refined result is the base text
 * (docs/enterprise.md, "How the rule was chosen"). A language is listed here when a rule measured on its held-out
 * speech does not make it worse. */
export const DEFAULT_RULE: RefineRule = {
  languages: [],
  agree: { minVotes: 2, protectedVotes: 4, margin: 0.05, maxEditLetters: 2 },
  select: DEFAULT_SELECT,
};

/** Refinement by agreement of independent decodes on the utterance's own audio (docs/enterprise.md, "Refinement"). */
export function defaultRefinerSettings(model: ModelSpec): RefinerSettings {
  return {
    model,
    // Independent decodes of the span (one encoder pass shared): beam 5, greedy, and beam 5 prompted with the
    // previous utterance. The earlier default (the 5 best of one beam search, the best-scoring one replacing the
    // text) let Whisper's own score choose, and it made as many transcripts worse as better on held-out speech.
    decodes: [
      { beam_size: 5, patience: 1, prompt_previous: false },
      { beam_size: 1, patience: 1, prompt_previous: false },
      { beam_size: 5, patience: 1, prompt_previous: true },
    ],
    padS: 0.3,
    rule: DEFAULT_RULE,
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
  /** Aborted when the task is no longer ours: the engine request ends at once. */
  signal?: AbortSignal;
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
  const { rule, decodes } = deps.settings;
  const mine = utterances.flatMap((u, i) => (refinable(u, rule) ? [i] : []));
  // Nothing in a language refinement may change: the base text, without decoding anything again.
  if (mine.length === 0) return { utterances: utterances.map((u) => ({ ...u })), changed: 0 };
  const sent = mine.map((i) => utterances[i]!);
  const result = await deps.engine.refine(refineParams(sent, config, audioPath, deps), {
    onProgress: deps.onProgress,
    timeoutMs: deps.timeoutMs,
    signal: deps.signal,
  });
  if (result.spans.length !== sent.length) {
    throw new Error(`engine refined ${result.spans.length} spans for ${sent.length} utterances`);
  }
  const spans: RefineSpanResult[] = utterances.map(() => ({ current_score: null, hypotheses: [] }));
  mine.forEach((i, k) => {
    spans[i] = result.spans[k]!;
  });
  return applyRefinement(utterances, { spans }, config, rule, decodes.length);
}

const withinLength = (text: string, current: string, o: SelectOptions): boolean => {
  const [n, base] = [letters(text), letters(current)];
  return base === 0 || (n >= base * o.minRatio && n <= base * o.maxRatio);
};

const refinable = (u: Utterance, rule: RefineRule): boolean =>
  rule.languages === null || (u.lang !== undefined && rule.languages.includes(u.lang));

/** The refined utterances from the engine's scores: each one's text replaced only by an accepted hypothesis. */
export function applyRefinement(
  utterances: readonly Utterance[],
  result: RefineResult,
  config: JobConfig,
  rule: RefineRule,
  decodes: number,
): RefineOutcome {
  if (result.spans.length !== utterances.length) {
    throw new Error(`engine refined ${result.spans.length} spans for ${utterances.length} utterances`);
  }
  let changed = 0;
  const keywords = config.keywords?.filter((k) => k.trim().length > 0) ?? [];
  const out = utterances.map((u, i) => {
    const span = result.spans[i]!;
    if (!refinable(u, rule) || u.duration < (rule.select.minUtteranceS ?? 0) * 1000) return { ...u };
    const [previous, next] = [utterances[i - 1]?.msg ?? null, utterances[i + 1]?.msg ?? null];
    // A text that spells out fillers the job's filter removes ("we hope that um, next year") is scored on words the
    // current text was filtered of: its better score can be the fillers', and what would replace the text is
    // another sentence (mu-law en: "I hope" -> "we hope"); one that takes in a neighbour's edge word doubles it.
    // Neither is compared.
    const usable = (text: string): boolean =>
      !takesNeighbourWords(text, u.msg, previous, next) && !filterRemovesWords(text, u.lang, config);
    let text: string | null;
    if (rule.agree) {
      const votes = (span.decoded ?? []).flatMap((texts) => {
        const best = texts[0];
        if (best === undefined || !usable(best)) return [];
        // Compared in the form the current text has: after the job's text options (ITN, filters).
        const score = span.hypotheses.find((h) => h.text === best)?.score ?? null;
        return [{ text: finalText(best, u, config) ?? best, score }];
      });
      // Too few usable decodes to agree: no change. Nor when the agreed text is much shorter or longer than the
      // current one (the score rule's length bounds): decodes that all stop early or all run on past the speech.
      const agreed =
        votes.length >= rule.agree.minVotes ? agreedText(u.msg, span.current_score, votes, keywords, rule.agree) : null;
      text = agreed !== null && withinLength(agreed, u.msg, rule.select) ? agreed : null;
    } else {
      const own = span.hypotheses.filter((h) => usable(h.text));
      text = selectHypothesis(u.msg, span.current_score, own, rule.select, decodes)?.text ?? null;
    }
    // An agreed text is the current text with edits taken from decodes already in that form: the text options are
    // not applied to it again (ITN run twice on "1001億円" wrote "10011億円").
    const msg = text === null ? null : rule.agree ? text : finalText(text, u, config);
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
