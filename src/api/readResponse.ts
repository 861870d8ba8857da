// The read body for each job state, per the spec's "Rules for the plain read" and "Rules for result=refined", and
// its schema (the OpenAPI document's ReadBody, and the type readResponse returns).
import { z } from "zod";
import { ApiError, REFINE_ERROR_CODES, type RefineErrorCode } from "../errors.js";
import { CATEGORIES } from "../insight/schema.js";
import type { JobRow } from "../storage/jobs.js";
import { readJobConfig, readResults, readResultsBody } from "../storage/stored.js";
import { Int } from "./route.js";

const Word = z
  .object({ start_at: Int, duration: Int, text: z.string() })
  .meta({ id: "Word", description: "Times in ms" });

export const UtteranceBody = z
  .object({
    start_at: Int,
    duration: Int,
    msg: z.string(),
    spk: Int,
    spk_type: z.literal("NORMAL"),
    spk_name: z
      .string()
      .optional()
      .meta({ description: "Extension (docs/speakers.md): the known speaker's name, with speaker_identification" }),
    lang: z.string(),
    words: z.array(Word).optional().meta({ description: "With use_word_timestamp" }),
  })
  .meta({ id: "Utterance", description: "Times in ms" });

const InsightItem = z
  .object({ title: z.string(), summary: z.string(), category: z.enum(CATEGORIES) })
  .meta({ id: "InsightItem" });

const Results = z
  .object({
    utterances: z.array(UtteranceBody),
    insight: z.array(InsightItem).optional().meta({ description: "With use_insight" }),
  })
  .meta({ id: "Results" });

const REFINE_STATES = ["queued", "processing", "completed", "failed"] as const;

export const ReadBody = z
  .union([
    // Each form and part named, so that generated clients get one model each (openapi-python-client made
    // duplicate names of the anonymous ones).
    z
      .object({ id: z.string(), status: z.literal("transcribing") })
      .meta({ id: "JobTranscribing" }),
    z.object({ id: z.string(), status: z.literal("completed"), results: Results }).meta({ id: "JobCompleted" }),
    z
      .object({
        id: z.string(),
        status: z.literal("failed"),
        error: z.object({ code: z.string(), message: z.string() }).meta({ id: "JobError" }),
      })
      .meta({ id: "JobFailed" }),
    z
      .object({
        id: z.string(),
        status: z.literal("completed"),
        refine_status: z.enum(REFINE_STATES),
        refine_error: z
          .object({ code: z.enum(REFINE_ERROR_CODES) })
          .meta({ id: "RefineError" })
          .optional(),
        results: Results.optional(),
      })
      .meta({ id: "JobRefined" }),
  ])
  .meta({ id: "ReadBody", description: "The last form answers result=refined (docs/enterprise.md)" });
export type ReadBody = z.infer<typeof ReadBody>;
type Results = z.infer<typeof Results>;

export function readResponse(job: JobRow, refined: boolean): ReadBody {
  const config = readJobConfig(job.config);
  if (refined && !config.use_refinement) {
    // Our choice where the spec is silent (docs/api.md): asking for a refined result of a job that did not
    // request refinement is an invalid parameter, whatever the job's state.
    throw new ApiError("H0001", "result=refined: refinement was not requested for this job (use_refinement)");
  }
  switch (job.state) {
    case "queued":
    case "running":
      return { id: job.id, status: "transcribing" };
    case "failed":
      return {
        id: job.id,
        status: "failed",
        error: { code: job.error_code ?? "E500", message: job.error_message ?? "" },
      };
    case "completed": {
      if (refined) return refinedBody(job);
      return completedBody(job.id, readResultsBody(job.result));
    }
  }
}

/** The plain read of a completed job, from its stored results body (also what `sori transcribe` prints). */
export function completedBody(id: string, stored: Record<string, unknown>): ReadBody {
  return { id, status: "completed", results: withSpkType(stored) };
}

/** result=refined on a completed job (docs/enterprise.md): the refinement phase's status, and once it completed the
 * refined utterances as the only member of results. */
function refinedBody(job: JobRow): ReadBody {
  // Completion sets refine_status in the same statement, so null means a row completed before migration 002.
  const status = job.refine_status ?? "failed";
  switch (status) {
    case "queued":
    case "processing":
      return { id: job.id, status: "completed", refine_status: status };
    case "completed": {
      return {
        id: job.id,
        status: "completed",
        refine_status: "completed",
        results: withSpkType({ utterances: readResults(job.refine_result)?.utterances ?? [] }),
      };
    }
    case "failed":
      return {
        id: job.id,
        status: "completed",
        refine_status: "failed",
        refine_error: { code: refineErrorCode(job.refine_error) },
      };
  }
}

// The refinement task writes only these codes (src/errors.ts).
const refineErrorCode = (code: string | null): RefineErrorCode => (code ?? "refiner_failed") as RefineErrorCode;

/** The real service's utterances carry `spk_type` ("NORMAL"), and the official Go SDK reads it; sori has no other
 * speaker type, so it is added on the way out rather than stored. The rest of the stored body (insight) is passed
 * as it was written (its members in their stored order: the body is the same byte for byte). */
function withSpkType(stored: Record<string, unknown>): Results {
  if (!Array.isArray(stored.utterances)) return stored as Results;
  const utterances = (stored.utterances as Omit<Results["utterances"][number], "spk_type">[]).map((u) => ({
    ...u,
    spk_type: "NORMAL" as const,
  }));
  return { ...stored, utterances } as Results;
}
