// Insight for a completed transcription: the transcript goes to the configured LLM, and its answer becomes the
// one-item `results.insight` array only if it passes parseInsight. A failed or invalid answer is tried once more
// (sampling instead of greedy decoding); a second failure is an InsightError, which the worker turns into
// `insight: []` without failing the job (docs/enterprise.md).
import type { Config } from "../config.js";
import type { Utterance } from "../domain/utterance.js";
import type { LlmBackend } from "./backend.js";
import { LocalLlm } from "./local.js";
import { OpenAiLlm } from "./openai.js";
import { buildPrompt } from "./prompt.js";
import { dominantLanguage, InsightError, parseInsight, type InsightItem } from "./schema.js";

export interface InsightRequest {
  utterances: readonly Utterance[];
  /** The job's language setting (ko, ja, detect, multi): the fallback when no utterance says. */
  language: string;
  prompt?: string | undefined;
  keywords?: string[] | undefined;
}

export function transcriptOf(utterances: readonly Utterance[]): string {
  const speakers = new Set(utterances.map((u) => u.spk));
  return utterances.map((u) => (speakers.size > 1 ? `[${u.spk}] ${u.msg}` : u.msg)).join("\n");
}

export async function generateInsight(req: InsightRequest, llm: LlmBackend, timeoutMs: number): Promise<InsightItem> {
  const fallback = req.language === "ko" || req.language === "ja" ? req.language : "ko";
  const language = dominantLanguage(req.utterances, fallback);
  const transcript = transcriptOf(req.utterances);
  if (!transcript.trim()) throw new InsightError("the transcript is empty");
  const { system, user } = buildPrompt({ transcript, language, prompt: req.prompt, keywords: req.keywords });
  const signal = AbortSignal.timeout(timeoutMs);
  let last: Error | null = null;
  for (const temperature of [0, 0.6]) {
    try {
      return parseInsight(await llm.complete({ system, user, temperature, signal }), language);
    } catch (err) {
      last = err as Error;
      if (signal.aborted) break;
    }
  }
  throw last instanceof InsightError ? last : new InsightError(`insight generation failed: ${last?.message ?? "unknown"}`);
}

export { InsightError, type InsightItem } from "./schema.js";
export type { LlmBackend } from "./backend.js";

/**
 * The `results.insight` value of a completed job: `[item]`, or `[]` when generation failed or no LLM is
 * configured (the transcription itself still completes); `error` says why, for the log and the job row.
 */
export async function insightForJob(
  req: InsightRequest,
  llm: LlmBackend | null,
  timeoutMs: number,
): Promise<{ insight: InsightItem[]; error: string | null }> {
  if (!llm) return { insight: [], error: "no insight model is configured" };
  try {
    return { insight: [await generateInsight(req, llm, timeoutMs)], error: null };
  } catch (err) {
    return { insight: [], error: (err as Error)?.message ?? String(err) };
  }
}

/** The configured LLM: the OpenAI-compatible endpoint when a base URL is set, else the embedded model. */
export function insightBackend(config: Config): LlmBackend {
  const c = config.insight;
  if (c.baseUrl) return new OpenAiLlm({ baseUrl: c.baseUrl, model: c.modelName, apiKey: c.apiKey, maxTokens: 300 });
  return new LocalLlm({ modelPath: c.modelPath, threads: c.threads, contextSize: 4096, maxTokens: 300 });
}
