// The transcribe task: the job's base result (pipeline and insight), and the refinement it asked for.
import { piiAudioMode } from "../../domain/jobConfig.js";
import { timeStage } from "../../metrics/index.js";
import { runJobPipeline } from "../../pipeline/job.js";
import { listSpeakers } from "../../storage/speakers.js";
import { readJobConfig } from "../../storage/stored.js";
import type { TaskCompletion } from "../../storage/tasks.js";
import { toFailure } from "../failure.js";
import { storeRedactedAudio } from "./redactedAudio.js";
import type { TaskContext, TaskDefinition, TaskDeps } from "./types.js";

export function transcribeTask(deps: TaskDeps): TaskDefinition {
  const { engine, models, config } = deps;
  return {
    toFailure,
    audioMissing: { code: "E500", message: "the job's audio is no longer stored", retryable: false },
    async run({ job, audioPath, onProgress, log, checkpoints, signal }: TaskContext): Promise<TaskCompletion> {
      const jobConfig = readJobConfig(job.config);
      const started = Date.now();
      // The voices it may name, as they are now: a speaker deleted since the submit is no longer named.
      const ids = jobConfig.speaker_identification?.speakers;
      const knownSpeakers = ids ? await listSpeakers(deps.store, job.client_id, ids.length ? ids : undefined) : [];
      const { results, insightError, said } = await runJobPipeline(
        { config: jobConfig, audioPath, maxAudioS: config.maxAudioS, knownSpeakers },
        {
          engine,
          models,
          timeoutFactor: config.engineTimeoutFactor,
          onProgress,
          checkpoints,
          signal,
          insight: { backend: deps.insight, timeoutMs: config.insight.timeoutS * 1000 },
        },
        job.audio_s,
      ).finally(() => checkpoints.flush());
      if (jobConfig.use_insight) {
        if (insightError) log.warn({ reason: insightError }, "insight failed; the job completes with insight []");
        else log.info({ elapsed_s: (Date.now() - started) / 1000 }, "transcription and insight done");
      }
      const audioMode = piiAudioMode(jobConfig);
      // Written before the completion that records its key: a completion that is lost leaves an unreferenced blob,
      // which the orphan sweep removes.
      const redactedKey =
        audioMode && said
          ? await timeStage("redacted_audio", () =>
              storeRedactedAudio(engine, deps.blobs, {
                audioPath,
                said,
                mode: audioMode,
                multiChannel: jobConfig.use_multi_channel,
                dataDir: config.dataDir,
                maxAudioS: config.maxAudioS,
                timeoutMs: Math.round((60 + (job.audio_s ?? config.maxAudioS) * config.engineTimeoutFactor) * 1000),
                signal,
              }),
            )
          : null;
      if (redactedKey) log.info({ spans: said?.redacted.length ?? 0 }, "redacted audio stored");
      const refinable = config.refine.enabled && deps.refiner !== null;
      return {
        results: {
          result: JSON.stringify(results),
          ...(jobConfig.use_insight ? { insight_error: insightError } : {}),
          ...(redactedKey ? { redacted_blob_key: redactedKey } : {}),
        },
        // The refinement starts with the completion, queued, or failed at once where this deployment cannot refine.
        ...(jobConfig.use_refinement
          ? {
              next: refinable
                ? { kind: "refine" as const }
                : { kind: "refine" as const, failed: { code: "refiner_enqueue_failed", message: null } },
            }
          : {}),
      };
    },
  };
}
