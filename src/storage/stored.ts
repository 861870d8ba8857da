// Typed reads of the JSON the job store keeps as text: the job config written at submit, and the results written
// at completion. Every read of stored JSON goes through here, so the shape each caller relies on is checked in one
// place instead of being asserted by a cast at each call site.
import { z } from "zod";
import { ConfigSchema, type JobConfig } from "../domain/jobConfig.js";
import type { Utterance } from "../domain/utterance.js";

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A job's stored config, with the defaults of fields added since it was stored. It was validated at submit; one
 * that the schema would no longer accept (a rule tightened since) is still read as it was accepted then.
 */
export function readJobConfig(text: string): JobConfig {
  const raw: unknown = JSON.parse(text);
  if (!isObject(raw)) throw new Error("stored job config is not a JSON object");
  const parsed = ConfigSchema.safeParse(raw);
  const config = (parsed.success ? parsed.data : raw) as Omit<JobConfig, "language"> & {
    language?: JobConfig["language"];
  };
  return { ...config, language: config.language ?? "ko" };
}

/** A stored results body (the plain read's `results`): an object, `{}` when there is none. */
export function readResultsBody(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  const body: unknown = JSON.parse(text);
  return isObject(body) ? body : {};
}

// What a stored utterance must have for the readers below (exports, the OpenAI route, refinement); other members
// are allowed. Checked, not parsed into a copy: the caller gets the stored objects, their members in stored order.
const StoredWord = z.object({ start_at: z.number(), duration: z.number(), text: z.string() });
const StoredResults = z.object({
  utterances: z.array(
    z.object({
      start_at: z.number(),
      duration: z.number(),
      msg: z.string(),
      spk: z.number(),
      lang: z.string(),
      words: z.array(StoredWord).optional(),
    }),
  ),
});

/** The utterances of a stored results body, or null when it holds no well-formed utterance list. */
export function readResults(text: string | null): ({ utterances: Utterance[] } & Record<string, unknown>) | null {
  const body = readResultsBody(text);
  return StoredResults.safeParse(body).success ? (body as { utterances: Utterance[] } & Record<string, unknown>) : null;
}
