// Admission of a new job, shared by every route that creates one (POST /v1/transcribe and the OpenAI-compatible
// endpoint): 429 A0002 for too many jobs in progress, 429 A0001 for the audio quota, then the job row itself.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { newId } from "../domain/ids.js";
import type { JobConfig } from "../domain/jobConfig.js";
import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import { audioSecondsSince, countInFlight, insertJob } from "../storage/jobs.js";
import type { AppContext } from "./context.js";

/** Before the upload is stored: the concurrency bound and a quota already used up. */
export async function checkBeforeUpload(app: FastifyInstance, client: ClientRow): Promise<void> {
  const { config, store } = app.sori;
  const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
  if ((await countInFlight(store, client.id)) >= maxConcurrent) {
    throw new ApiError("A0002", `at most ${maxConcurrent} jobs may be in progress at once`);
  }
  await quotaLeft(app.sori, client);
}

/** The audio seconds a client's usage quota has left in its window (Infinity without a quota); 429 A0001 when none.
 * Streamed audio counts too (streamAdmission.ts). */
export async function quotaLeft(ctx: AppContext, client: ClientRow): Promise<number> {
  const { config, store } = ctx;
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  if (quotaS <= 0) return Number.POSITIVE_INFINITY;
  const used = await audioSecondsSince(store, client.id, Date.now() - config.quotaWindowS * 1000);
  if (used >= quotaS) {
    throw new ApiError("A0001", `audio usage quota of ${quotaS} s per ${config.quotaWindowS} s is used up`);
  }
  return quotaS - used;
}

/** Once the audio's length is known: would this file go over the quota? */
export async function checkQuotaFor(app: FastifyInstance, client: ClientRow, audioS: number | null): Promise<void> {
  const { config, store } = app.sori;
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  if (quotaS > 0 && (await audioSecondsSince(store, client.id, quotaWindowStart(app))) + (audioS ?? 0) > quotaS) {
    throw new ApiError(
      "A0001",
      `this file would exceed the audio usage quota of ${quotaS} s per ${config.quotaWindowS} s`,
    );
  }
}

const quotaWindowStart = (app: FastifyInstance): number => Date.now() - app.sori.config.quotaWindowS * 1000;

/**
 * Moves the checked upload from the spool into the blob store and queues its job; returns the job id and the blob
 * key (the caller removes the blob if this fails after storing it). Workers here and elsewhere are woken.
 */
export async function queueJob(
  app: FastifyInstance,
  req: FastifyRequest,
  job: { client: ClientRow; config: JobConfig; spoolPath: string; format: string; audioS: number | null; via?: string },
  stored: (blobKey: string) => void,
): Promise<string> {
  const { store, blobs, config } = app.sori;
  const id = newId(16);
  const blob = await blobs.adopt(job.spoolPath);
  stored(blob.key);
  const { client } = job;
  const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  // The checks above ran before the upload, outside any transaction; these run again where the job is inserted, in
  // its transaction and (PostgreSQL) under the client's lock, so concurrent submits on several API hosts cannot
  // pass a bound together.
  const admission = {
    since: quotaWindowStart(app),
    check({ inFlight, audioS }: { inFlight: number; audioS: number }): void {
      if (inFlight >= maxConcurrent) {
        throw new ApiError("A0002", `at most ${maxConcurrent} jobs may be in progress at once`);
      }
      if (quotaS > 0 && audioS + (job.audioS ?? 0) > quotaS) {
        throw new ApiError(
          "A0001",
          `this file would exceed the audio usage quota of ${quotaS} s per ${config.quotaWindowS} s`,
        );
      }
    },
  };
  await insertJob(
    store,
    {
      id,
      client_id: job.client.id,
      config: JSON.stringify(job.config),
      blob_key: blob.key,
      file_format: job.format,
      audio_s: job.audioS,
      max_attempts: config.maxAttempts,
    },
    Date.now(),
    admission,
  );
  req.log.info(
    { job_id: id, client_id: job.client.id, format: job.format, audio_s: job.audioS, bytes: blob.bytes, via: job.via },
    "job queued",
  );
  app.sori.onJobQueued();
  return id;
}
