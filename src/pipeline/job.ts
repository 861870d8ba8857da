// A job's whole base result: the transcription pipeline and then, when the job asked for it, insight. The spec
// puts insight in the base result at completion, so `completed` waits for it; an insight failure gives
// `insight: []` and the transcription completes all the same (docs/enterprise.md). With `use_pii_redaction`
// (docs/pii.md) the utterances are redacted before insight reads them, and the insight is checked again after.
import { insightForJob, type LlmBackend } from "../insight/index.js";
import { recordInsightFailure, timeStage } from "../metrics/index.js";
import type { SaidInAudio } from "../pii/audio.js";
import { redactText } from "../pii/index.js";
import { type JobResults, jobRedaction, type PipelineDeps, type PipelineInput, runPipelineSaid } from "./run.js";

export interface JobPipelineDeps extends PipelineDeps {
  /** The insight LLM (null: none configured, so a job that asks for insight gets `[]`) and its time budget. */
  insight: { backend: LlmBackend | null; timeoutMs: number };
}

export interface JobOutcome {
  results: JobResults & { insight?: unknown };
  /** Why insight failed, for the log and the job row (never shown to the client); null when it did not. */
  insightError: string | null;
  /** Where the redacted spans and the words were said, when the job asked for a redacted copy of the audio; else
   * null. */
  said: SaidInAudio | null;
}

export async function runJobPipeline(
  input: PipelineInput,
  deps: JobPipelineDeps,
  audioSeconds: number | null,
): Promise<JobOutcome> {
  const { results, said }: Pick<JobOutcome, "results" | "said"> = await runPipelineSaid(input, deps, audioSeconds);
  if (!input.config.use_insight) return { results, insightError: null, said };
  const { insight, error, reason } = await timeStage("insight", () =>
    insightForJob(
      {
        utterances: results.utterances,
        language: input.config.language,
        prompt: input.config.insight?.prompt,
        keywords: input.config.keywords,
      },
      deps.insight.backend,
      deps.insight.timeoutMs,
    ),
  );
  // The model saw only redacted text; what it wrote is checked all the same (it may make up a number), and so is
  // the reason of a failure (it can quote the model's answer), which goes to the log.
  const redaction = jobRedaction(input.config);
  results.insight = redaction
    ? insight.map((i) => ({ ...i, title: redactText(i.title, redaction), summary: redactText(i.summary, redaction) }))
    : insight;
  if (reason) recordInsightFailure(reason);
  return { results, insightError: redaction && error ? redactText(error, redaction) : error, said };
}
