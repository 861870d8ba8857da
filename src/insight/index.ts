// Insight for a completed transcription: the transcript goes to the configured LLM, and its answer becomes the
// one-item `results.insight` array only if it passes parseInsight. A transcript longer than one pass is
// summarised map-reduce: notes on each window, then the item from the notes. A failed or invalid answer is tried
// once more (sampling instead of greedy decoding); a second failure, or the time limit, is an InsightError, which
// the worker turns into `insight: []` without failing the job (docs/enterprise.md).
import type { Config } from "../config.js";
import type { Utterance } from "../domain/utterance.js";
import type { LlmBackend, SharedPrompt } from "./backend.js";
import { compactLines } from "./compact.js";
import { LocalLlm, type LocalLlmOptions } from "./local.js";
import { OpenAiLlm } from "./openai.js";
import { buildNotesPrompt, buildPrompt, type ChatPrompt } from "./prompt.js";
import {
  dominantLanguage,
  InsightError,
  type InsightFailure,
  type InsightItem,
  parseInsight,
  parseNotes,
} from "./schema.js";
import { splitWindows } from "./windows.js";

export interface InsightRequest {
  utterances: readonly Utterance[];
  /** The job's language setting (ko, ja, detect, multi): the fallback when no utterance says. */
  language: string;
  prompt?: string | undefined;
  keywords?: string[] | undefined;
}

/** A transcript up to this many characters is summarised in one pass (a 5-minute Korean call is about 1,600). */
export const SINGLE_PASS_CHARS = 2400;
/** Window size of the map step for longer transcripts. */
export const WINDOW_CHARS = 1600;

export function transcriptLines(utterances: readonly Utterance[]): string[] {
  const speakers = new Set(utterances.map((u) => u.spk));
  return utterances.filter((u) => u.msg.trim()).map((u) => (speakers.size > 1 ? `[${u.spk}] ${u.msg}` : u.msg));
}

export function transcriptOf(utterances: readonly Utterance[]): string {
  return transcriptLines(utterances).join("\n");
}

type Schema = "item" | "notes";

function request(p: ChatPrompt, schema: Schema, temperature: number, signal: AbortSignal) {
  return { system: p.system, examples: p.examples, user: p.user, schema, temperature, signal };
}

/** Asks twice at most (greedy, then sampled); `parse` decides whether an answer is usable. */
async function ask<T>(
  llm: LlmBackend,
  p: ChatPrompt,
  schema: Schema,
  signal: AbortSignal,
  parse: (raw: string) => T,
): Promise<T> {
  let last: Error | null = null;
  for (const temperature of [0, 0.6]) {
    try {
      return parse(await llm.complete(request(p, schema, temperature, signal)));
    } catch (err) {
      last = err as Error;
      if (signal.aborted) break;
    }
  }
  if (signal.aborted) throw new InsightError("insight generation timed out", "timeout");
  throw last instanceof InsightError
    ? last
    : new InsightError(`insight generation failed: ${last?.message ?? "unknown"}`, "backend_error");
}

/** The request every job's prompt begins with, per schema: what a backend evaluates once (LlmBackend.prepare). */
export function sharedPrompts(): SharedPrompt[] {
  const item = buildPrompt({ transcript: "", language: "ko" });
  const notes = buildNotesPrompt("", "ko");
  return [
    { system: item.system, examples: item.examples, user: item.user, schema: "item" },
    { system: notes.system, examples: notes.examples, user: notes.user, schema: "notes" },
  ];
}

/** `timeoutMs` counts the job's own work: it starts once the backend is ready (its model loaded, its shared prompt
 * evaluated), never with the model's loading, which the first job after a start would otherwise pay. */
export async function generateInsight(req: InsightRequest, llm: LlmBackend, timeoutMs: number): Promise<InsightItem> {
  await llm.ready?.();
  const signal = AbortSignal.timeout(timeoutMs);
  return withDeadline(generate(req, llm, signal), signal);
}

/**
 * The answer, or an InsightError as soon as `signal` aborts, whether or not the backend has stopped: the embedded
 * model sees the signal only between its batches of tokens, so without this a job would wait for the batch in
 * progress (on a saturated machine, minutes). The abandoned generation stops at its next batch (local.ts keeps
 * them small) and its result is dropped.
 */
function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {}); // an abandoned generation's failure is expected and has nowhere to go
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new InsightError("insight generation timed out", "timeout"));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

async function generate(req: InsightRequest, llm: LlmBackend, signal: AbortSignal): Promise<InsightItem> {
  const fallback = req.language === "ko" || req.language === "ja" ? req.language : "ko";
  const language = dominantLanguage(req.utterances, fallback);
  const lines = compactLines(req.utterances);
  const transcript = lines.join("\n");
  if (!transcript.trim()) throw new InsightError("the transcript is empty", "empty_transcript");
  const steer = { language, prompt: req.prompt, keywords: req.keywords };
  if (transcript.length <= SINGLE_PASS_CHARS) {
    return ask(llm, buildPrompt({ transcript, ...steer }), "item", signal, (raw) =>
      parseInsight(raw, language, transcript),
    );
  }
  // Map-reduce: every window is read, instead of cutting the middle of a long call out.
  const notes: string[] = [];
  for (const window of splitWindows(lines, WINDOW_CHARS)) {
    notes.push(await ask(llm, buildNotesPrompt(window, language), "notes", signal, parseNotes));
  }
  const joined = notes.map((n, i) => `${i + 1}. ${n}`).join("\n");
  return ask(llm, buildPrompt({ transcript: joined, fromNotes: true, ...steer }), "item", signal, (raw) =>
    parseInsight(raw, language, transcript),
  );
}

export type { LlmBackend } from "./backend.js";
export { InsightError, type InsightFailure, type InsightItem } from "./schema.js";

/**
 * The `results.insight` value of a completed job: `[item]`, or `[]` when generation failed or no LLM is
 * configured (the transcription itself still completes); `error` says why, for the log and the job row.
 * `timeoutMs` bounds the whole generation (all map and reduce calls, retries included): the caller passes what
 * the job can spare, so that insight is never the reason a job misses its deadline.
 */
export async function insightForJob(
  req: InsightRequest,
  llm: LlmBackend | null,
  timeoutMs: number,
): Promise<{ insight: InsightItem[]; error: string | null; reason: InsightFailure | null }> {
  if (!llm) return { insight: [], error: "no insight model is configured", reason: "not_configured" };
  try {
    return { insight: [await generateInsight(req, llm, timeoutMs)], error: null, reason: null };
  } catch (err) {
    const reason = err instanceof InsightError ? err.reason : "backend_error";
    return { insight: [], error: (err as Error)?.message ?? String(err), reason };
  }
}

/** The configured LLM: the OpenAI-compatible endpoint when a base URL is set, else the embedded model, whose
 * evaluated shared prompts are kept in SORI_INSIGHT_STATE_DIR (beside the model by default: they belong to it). */
export function insightBackend(config: Config, onLog?: LocalLlmOptions["onLog"]): LlmBackend {
  const c = config.insight;
  if (c.baseUrl) return new OpenAiLlm({ baseUrl: c.baseUrl, model: c.modelName, apiKey: c.apiKey, maxTokens: 300 });
  return new LocalLlm({
    modelPath: c.modelPath,
    threads: c.threads,
    contextSize: 4096,
    maxTokens: 300,
    stateDir: c.stateDir,
    onLog,
  });
}
