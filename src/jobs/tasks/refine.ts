// The refine task (docs/enterprise.md): re-decodes the completed job's utterances with the refiner's settings and
// records the refined ones beside the base result, which it never touches.
import { EngineError } from "../../engine/protocol.js";
import { redactUtterances } from "../../pii/index.js";
import { jobRedaction } from "../../pipeline/run.js";
import { refineUtterances } from "../../refine/refiner.js";
import { readJobConfig, readResults } from "../../storage/stored.js";
import type { TaskCompletion } from "../../storage/tasks.js";
import { TaskFailed, toRefineFailure } from "../failure.js";
import type { TaskContext, TaskDefinition, TaskDeps } from "./types.js";

const unavailable = (message: string) =>
  new TaskFailed({ code: "refiner_input_unavailable", message, retryable: false });

export function refineTask(deps: TaskDeps): TaskDefinition {
  const { engine, config } = deps;
  return {
    toFailure: toRefineFailure,
    audioMissing: {
      code: "refiner_input_unavailable",
      message: "the job's audio is no longer stored",
      retryable: false,
    },
    async run({ job, audioPath, onProgress, log, signal }: TaskContext): Promise<TaskCompletion> {
      const settings = deps.refiner;
      // A worker claims refinements only with a refiner; this guards a misconfigured call.
      if (!settings)
        throw new TaskFailed({ code: "refiner_failed", message: "no refiner is configured", retryable: false });
      const base = readResults(job.result);
      if (!base) throw unavailable("the base result has no utterances");
      const budgetS = job.audio_s ?? config.maxAudioS;
      const jobConfig = readJobConfig(job.config);
      const refined = await refineUtterances(base.utterances, jobConfig, audioPath, {
        engine,
        settings,
        maxAudioS: config.maxAudioS,
        // Several decodes per utterance: twice the base pass's budget.
        timeoutMs: Math.round((120 + 2 * budgetS * config.engineTimeoutFactor) * 1000),
        onProgress,
        signal,
      }).catch((err: unknown) => {
        // Only a crashed or hung engine may pass on another attempt (toRefineFailure); a bug here would not.
        throw err instanceof EngineError
          ? err
          : new TaskFailed({
              code: "refiner_failed",
              message: (err as Error)?.message ?? String(err),
              retryable: false,
            });
      });
      log.info({ utterances: refined.utterances.length, changed: refined.changed }, "refinement done");
      // The refinement decodes the audio again, so it can write back what the base result masked: it is redacted
      // the same way (docs/pii.md).
      const redaction = jobRedaction(jobConfig);
      const utterances = redaction ? redactUtterances(refined.utterances, redaction) : refined.utterances;
      return { results: { refine_result: JSON.stringify({ utterances }) } };
    },
  };
}
