// `sori transcribe FILE [--config JSON]`: a local one-shot through the same job pipeline a worker runs (insight
// included when the config asks for it), with a progress bar on stderr; prints the body a client would read from
// GET /v1/transcribe/{id}.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import cliProgress from "cli-progress";
import { Command } from "commander";
import { toApiError } from "../api/errorMapping.js";
import { completedBody } from "../api/readResponse.js";
import { containerDuration } from "../audio/duration.js";
import { detectFormat } from "../audio/format.js";
import { loadConfig } from "../config.js";
import { InvalidInput, UnsupportedAudio } from "../domain/errors.js";
import { parseJobConfig } from "../domain/jobConfig.js";
import { Engine } from "../engine/client.js";
import { loadDiarizationModels, loadModelRegistry } from "../engine/models.js";
import { isApiError } from "../errors.js";
import { insightBackend, type LlmBackend, sharedPrompts } from "../insight/index.js";
import { toFailure } from "../jobs/failure.js";
import { runJobPipeline } from "../pipeline/job.js";

export function transcribeCommand(): Command {
  return new Command("transcribe")
    .description("transcribe a local file once and print the result JSON")
    .argument("<file>", "audio file (mp4, m4a, mp3, amr, flac, wav)")
    .option("--config <json>", "the config object, as for POST /v1/transcribe", "{}")
    .option("--no-progress", "no progress bar")
    .action(async (file: string, o: { config: string; progress: boolean }) => {
      const config = loadConfig();
      const audioPath = path.resolve(file);
      const id = `local-${randomBytes(6).toString("base64url")}`;
      const print = (body: unknown) => process.stdout.write(JSON.stringify(body, null, 2) + "\n");
      const bar =
        o.progress && process.stderr.isTTY
          ? new cliProgress.SingleBar({ stream: process.stderr }, cliProgress.Presets.shades_classic)
          : null;
      // A models file's diarization models are checked here, before anything runs (a bad one stops the command).
      const engine = new Engine({
        python: config.python,
        env: loadDiarizationModels(config.modelsFile, config.python),
      });
      let insight: LlmBackend | null = null;
      try {
        if (!fs.existsSync(audioPath)) throw new Error(`no such file: ${file}`);
        const jobConfig = parseJobConfig(o.config);
        const format = await detectFormat(audioPath);
        const audioS = await containerDuration(audioPath, format);
        if (jobConfig.use_insight) {
          insight = insightBackend(config);
          insight.prepare?.(sharedPrompts()); // reads the evaluated shared prompt from disk where it is kept
        }
        bar?.start(100, 0);
        const { results, insightError } = await runJobPipeline(
          { config: jobConfig, audioPath, maxAudioS: config.maxAudioS },
          {
            engine,
            models: loadModelRegistry(config.modelsDir, config.modelsFile, config.python),
            timeoutFactor: config.engineTimeoutFactor,
            onProgress: (f) => bar?.update(Math.round(f * 100)),
            insight: { backend: insight, timeoutMs: config.insight.timeoutS * 1000 },
          },
          audioS,
        );
        bar?.update(100);
        bar?.stop();
        if (insightError) process.stderr.write(`insight failed; the result has insight []: ${insightError}\n`);
        // The read body's form (spk_type added), from the results as a worker would store them.
        print(completedBody(id, { ...results }));
      } catch (err) {
        bar?.stop();
        if (isApiError(err) || err instanceof InvalidInput || err instanceof UnsupportedAudio) {
          print(toApiError(err).toBody());
        } else {
          const f = toFailure(err);
          print({ id, status: "failed", error: { code: f.code, message: f.message } });
        }
        process.exitCode = 1;
      } finally {
        await engine.stop();
        await insight?.close();
      }
    });
}
