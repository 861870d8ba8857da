// POST /v1/transcribe (submit) and GET /v1/transcribe/{id} (read), exactly as the spec's tables say.
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { containerDuration } from "../audio/duration.js";
import { detectFormat } from "../audio/format.js";
import { ApiError } from "../errors.js";
import { parseJobConfig } from "../jobs/jobConfig.js";
import { audioSecondsSince, countInFlight, getJob, insertJob } from "../storage/jobs.js";
import { requireClient } from "./auth.js";
import { readResponse } from "./readResponse.js";
import { readUpload } from "./upload.js";

const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

export async function transcribeRoutes(app: FastifyInstance): Promise<void> {
  const { config, store, blobs, limiter } = app.sori;
  app.addHook("onRequest", requireClient);

  app.post("/v1/transcribe", async (req, reply) => {
    const client = req.client!;
    const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
    const quotaS = client.quota_s ?? config.defaults.quotaS;
    const windowStart = Date.now() - config.quotaWindowS * 1000;

    // Refuse before reading the body when the answer is already known. The connection is closed after an early
    // answer so a large upload is not read only to be thrown away.
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > config.maxFileBytes + 1024 * 1024) {
      reply.header("connection", "close");
      throw new ApiError("H0005", `file exceeds the size limit of ${config.maxFileBytes} bytes`);
    }
    if ((await countInFlight(store, client.id)) >= maxConcurrent) {
      reply.header("connection", "close");
      throw new ApiError("A0002", `at most ${maxConcurrent} jobs may be in progress at once`);
    }
    if (quotaS > 0 && (await audioSecondsSince(store, client.id, windowStart)) >= quotaS) {
      reply.header("connection", "close");
      throw new ApiError("A0001", `audio usage quota of ${quotaS} s per ${config.quotaWindowS} s is used up`);
    }

    const upload = await readUpload(req, blobs, config.maxFileBytes).catch((err) => {
      if (err instanceof ApiError && err.code === "H0005") reply.header("connection", "close");
      throw err;
    });
    const blob = upload.blob;
    try {
      const jobConfig = parseJobConfig(upload.configText);
      if (!blob) throw new ApiError("H0001", "file part is required");
      if (blob.bytes === 0) throw new ApiError("H0010", "the file is empty");
      if ((jobConfig.use_refinement || jobConfig.use_insight) && client.tier !== "enterprise") {
        const what = jobConfig.use_refinement ? "use_refinement" : "use_insight";
        throw new ApiError("H0003", `${what} requires an Enterprise license`);
      }
      const format = await detectFormat(blob.path);
      const audioS = await containerDuration(blob.path, format);
      if (audioS !== null && audioS > config.maxAudioS) {
        throw new ApiError("H0006", `audio is ${Math.round(audioS)} s long; the limit is ${config.maxAudioS} s`);
      }
      if (quotaS > 0 && (await audioSecondsSince(store, client.id, windowStart)) + (audioS ?? 0) > quotaS) {
        throw new ApiError("A0001", `this file would exceed the audio usage quota of ${quotaS} s per ${config.quotaWindowS} s`);
      }
      const id = randomBytes(16).toString("base64url");
      await insertJob(store, {
        id,
        client_id: client.id,
        config: JSON.stringify(jobConfig),
        blob_key: blob.key,
        file_format: format,
        audio_s: audioS,
        max_attempts: config.maxAttempts,
      });
      req.log.info({ job_id: id, client_id: client.id, format, audio_s: audioS, bytes: blob.bytes }, "job queued");
      app.sori.onJobQueued();
      return { id };
    } catch (err) {
      if (blob) await blobs.remove(blob.key);
      throw err;
    }
  });

  app.get<{ Params: { id: string }; Querystring: { result?: string } }>("/v1/transcribe/:id", async (req) => {
    const client = req.client!;
    const { id } = req.params;
    const { result } = req.query;
    if (!JOB_ID.test(id)) throw new ApiError("H0001", "invalid transcribe id");
    if (result !== undefined && result !== "refined") throw new ApiError("H0001", "result must be 'refined' when given");
    const rps = client.read_rps ?? config.defaults.readRps;
    if (!limiter.take(`read:${client.id}`, rps, config.defaults.readBurst)) {
      throw new ApiError("A0003", `polling too fast: at most ${rps} reads per second (poll about every 5 s)`);
    }
    const job = await getJob(store, id);
    if (!job) throw new ApiError("H0004", "no transcription with this id");
    if (job.client_id !== client.id) throw new ApiError("H0003", "this transcription belongs to another client");
    if (job.expired || (job.expires_at !== null && job.expires_at < Date.now())) {
      throw new ApiError("H0007", "the result has expired and was deleted");
    }
    return readResponse(job, result === "refined");
  });
}
