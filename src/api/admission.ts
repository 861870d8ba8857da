// The submit limits a client's new job must pass, shared by routes that create jobs outside the spec's submit
// (the OpenAI-compatible endpoint): 429 A0002 for too many jobs in progress, 429 A0001 for the audio quota.
// They mirror POST /v1/transcribe's checks (src/api/transcribe.ts), with the same messages.
import type { FastifyInstance } from "fastify";
import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import { audioSecondsSince, countInFlight } from "../storage/jobs.js";

/** Before the upload is stored: the concurrency bound and a quota already used up. */
export async function checkBeforeUpload(app: FastifyInstance, client: ClientRow): Promise<void> {
  const { config, store } = app.sori;
  const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
  if ((await countInFlight(store, client.id)) >= maxConcurrent) {
    throw new ApiError("A0002", `at most ${maxConcurrent} jobs may be in progress at once`);
  }
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  if (quotaS > 0 && (await audioSecondsSince(store, client.id, quotaWindowStart(app))) >= quotaS) {
    throw new ApiError("A0001", `audio usage quota of ${quotaS} s per ${config.quotaWindowS} s is used up`);
  }
}

/** Once the audio's length is known: would this file go over the quota? */
export async function checkQuotaFor(app: FastifyInstance, client: ClientRow, audioS: number | null): Promise<void> {
  const { config, store } = app.sori;
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  if (quotaS > 0 && (await audioSecondsSince(store, client.id, quotaWindowStart(app))) + (audioS ?? 0) > quotaS) {
    throw new ApiError("A0001", `this file would exceed the audio usage quota of ${quotaS} s per ${config.quotaWindowS} s`);
  }
}

const quotaWindowStart = (app: FastifyInstance): number => Date.now() - app.sori.config.quotaWindowS * 1000;
