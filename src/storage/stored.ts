// Typed reads of the JSON the job store keeps as text: the job config written at submit, and the results written
// at completion. A value that does not have the shape it must have is an error here, not a cast that lies later.
import { ConfigSchema, type JobConfig } from "../domain/jobConfig.js";
import type { Utterance } from "../domain/utterance.js";

/** A job's stored config (validated at submit; defaults added since are filled in). */
export function readJobConfig(text: string): JobConfig {
  const parsed = ConfigSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`stored job config is invalid: ${parsed.error.issues[0]?.message ?? "unknown"}`);
  return { ...parsed.data, language: parsed.data.language ?? "ko" };
}

/** The stored results body of a completed job or refinement: null when there is none or it holds no utterance list. */
export function readResults(text: string | null): ({ utterances: Utterance[] } & Record<string, unknown>) | null {
  if (text === null) return null;
  const body: unknown = JSON.parse(text);
  if (body === null || typeof body !== "object" || !Array.isArray((body as { utterances?: unknown }).utterances)) return null;
  return body as { utterances: Utterance[] } & Record<string, unknown>;
}
