// The read body for each job state, per the spec's "Rules for the plain read" and "Rules for result=refined".
import { ApiError } from "../errors.js";
import type { JobRow } from "../storage/jobs.js";
import { readJobConfig, readResults, readResultsBody } from "../storage/stored.js";

export type ReadBody =
  | { id: string; status: "transcribing" }
  | { id: string; status: "completed"; results: unknown }
  | { id: string; status: "failed"; error: { code: string; message: string } }
  | { id: string; status: "completed"; refine_status: string; refine_error?: { code: string }; results?: unknown };

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
      return { id: job.id, status: "failed", error: { code: job.error_code ?? "E500", message: job.error_message ?? "" } };
    case "completed": {
      if (refined) return refinedBody(job);
      return { id: job.id, status: "completed", results: withSpkType(readResultsBody(job.result) as Results) };
    }
  }
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
      return { id: job.id, status: "completed", refine_status: "completed", results: withSpkType({ utterances: readResults(job.refine_result)?.utterances ?? [] }) };
    }
    case "failed":
      return { id: job.id, status: "completed", refine_status: "failed", refine_error: { code: job.refine_error ?? "refiner_failed" } };
  }
}

type Results = { utterances?: object[] } & Record<string, unknown>;

/** The real service's utterances carry `spk_type` ("NORMAL"), and the official Go SDK reads it; sori has no other
 * speaker type, so it is added on the way out rather than stored. */
function withSpkType(results: Results): Results {
  if (!results.utterances) return results;
  return { ...results, utterances: results.utterances.map((u) => ({ ...u, spk_type: "NORMAL" })) };
}
