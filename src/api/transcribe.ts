// POST /v1/transcribe (submit) and GET /v1/transcribe/{id} (read), exactly as the spec's tables say.
import fs from "node:fs";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { containerDuration } from "../audio/duration.js";
import { AUDIO_PART_TYPES, detectFormat } from "../audio/format.js";
import { checkCallbackUrl } from "../callbacks/ssrf.js";
import { ConfigSchema, parseJobConfig } from "../domain/jobConfig.js";
import { ApiError } from "../errors.js";
import { checkKnownSpeakers } from "../speakers/index.js";
import { checkBeforeUpload, checkQuotaFor, queueJob } from "./admission.js";
import { requireClient } from "./auth.js";
import { findOwnJob, JobIdParams, READ_ERRORS, takeRead } from "./jobAccess.js";
import { ReadBody, readResponse } from "./readResponse.js";
import { ErrorBody, operationId, type Route, route } from "./route.js";
import { readUpload, singleField } from "./upload.js";

const ReadQuery = z.object({
  result: z.literal("refined", { error: "result must be 'refined' when given" }).optional(),
});
const SubmitBody = z.object({
  config: ConfigSchema.meta({ id: "Config", description: "The submit's config part. Unknown fields are ignored." }),
  file: z.string().meta({ format: "binary", description: "mp4, m4a, mp3, amr, flac or wav" }),
});
const Queued = z.strictObject({ id: z.string() });

const submit = {
  method: "post",
  path: "/v1/transcribe",
  summary: "Submit a transcription job",
  auth: true,
  upload: {
    form: SubmitBody,
    encoding: { config: { contentType: "application/json" }, file: { contentType: AUDIO_PART_TYPES } },
  },
  responses: {
    200: {
      description: "Queued",
      content: { "application/json": Queued },
      links: Object.fromEntries(
        (
          [
            ["read", "get", ""],
            ["export", "get", "/export"],
            ["redacted_audio", "get", "/redacted-audio"],
            ["delete", "delete", ""],
          ] as const
        ).map(([name, method, tail]) => [
          name,
          {
            operationId: operationId({ method, path: `/v1/transcribe/:id${tail}` }),
            parameters: { id: "$response.body#/id" },
          },
        ]),
      ),
    },
  },
  errors: ["H0001", "H0010", "H0002", "H0003", "H0005", "H0006", "A0001", "A0002"],
  errorBody: ErrorBody,
} satisfies Route;

const read = {
  method: "get",
  path: "/v1/transcribe/:id",
  summary: "Read a job",
  auth: true,
  params: JobIdParams,
  query: ReadQuery,
  responses: { 200: { description: "The job", content: { "application/json": ReadBody } } },
  errors: [...READ_ERRORS],
  errorBody: ErrorBody,
} satisfies Route;

export const transcribeDeclarations: Route[] = [submit, read];

export async function transcribeRoutes(app: FastifyInstance): Promise<void> {
  const { config, blobs } = app.sori;
  app.addHook("onRequest", requireClient);

  route(app, submit, async (req) => {
    const client = req.client!;

    // Refuse before storing the body when the answer is already known; the rest of the body is then read and dropped,
    // within bounds, so that a client that sends its whole body before reading still gets the answer (server.ts,
    // lingeringClose.ts).
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > config.maxFileBytes + 1024 * 1024) {
      throw new ApiError("H0005", `file exceeds the size limit of ${config.maxFileBytes} bytes`);
    }
    await checkBeforeUpload(app, client);

    const upload = await readUpload(req, {
      dataDir: config.dataDir,
      maxBytes: config.maxFileBytes,
      tooLarge: `file exceeds the size limit of ${config.maxFileBytes} bytes`,
      textParts: ["config"],
    });
    const blob = upload.file; // in the spool until it is adopted into the blob store
    let blobKey: string | null = null;
    try {
      const jobConfig = parseJobConfig(singleField(upload, "config"), { speakers: config.speakers.enabled });
      if (jobConfig.speaker_identification) {
        await checkKnownSpeakers(app.sori.store, client.id, jobConfig.speaker_identification.speakers);
      }
      checkCallbackUrl(jobConfig.callback_url, config.callbackAllowPrivate);
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
      await checkQuotaFor(app, client, audioS);
      const id = await queueJob(
        app,
        req,
        { client, config: jobConfig, spoolPath: blob.path, format, audioS },
        (key) => (blobKey = key),
      );
      return { id };
    } catch (err) {
      // Left behind only if the store is unreachable now; the orphan sweep removes it later.
      if (blobKey) await blobs.remove(blobKey).catch(() => {});
      throw err;
    } finally {
      if (blob) await fs.promises.rm(blob.path, { force: true });
    }
  });

  route(app, read, async (req) => {
    const client = req.client!;
    await takeRead(app, client);
    const job = await findOwnJob(app, client, req.params.id);
    return readResponse(job, req.query.result === "refined");
  });
}
