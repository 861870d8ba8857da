// GET /v1/transcribe/{id}/redacted-audio: the copy of a job's audio with every redacted span silenced or beeped
// (`pii_redaction.audio`, an extension: docs/pii.md). Same access rules and read rate as the spec's read, through the
// shared lookup; a job that did not ask for the copy, or whose copy is not made yet, answers 404 H0004.
import fs from "node:fs";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ApiError } from "../errors.js";
import { BlobNotFoundError } from "../storage/blobs/index.js";
import { requireClient } from "./auth.js";
import { findOwnJob, JobIdParams, READ_ERRORS, takeRead } from "./jobAccess.js";
import { ErrorBody, type Route, route } from "./route.js";

const redactedAudioRoute = {
  method: "get",
  path: "/v1/transcribe/:id/redacted-audio",
  summary:
    "Extension, not in the spec (docs/pii.md): the job's audio with every redacted span silenced or beeped, as 16 kHz 16-bit PCM WAV (a channel per channel with use_multi_channel, else mono); only for a completed job that asked for pii_redaction.audio",
  auth: true,
  params: JobIdParams,
  responses: {
    200: { description: "The redacted audio", content: { "audio/wav": z.string().meta({ format: "binary" }) } },
  },
  errors: [...READ_ERRORS],
  errorBody: ErrorBody,
} satisfies Route;

export const redactedAudioDeclarations: Route[] = [redactedAudioRoute];

export async function redactedAudioRoutes(app: FastifyInstance): Promise<void> {
  app.addHook("onRequest", requireClient);

  route(app, redactedAudioRoute, async (req, reply) => {
    const client = req.client!;
    await takeRead(app, client);
    const job = await findOwnJob(app, client, req.params.id);
    if (!job.redacted_blob_key) {
      const why =
        job.state === "completed"
          ? "the job did not ask for it (pii_redaction.audio)"
          : job.state === "failed"
            ? "the job failed"
            : "the job is still transcribing";
      throw new ApiError("H0004", `no redacted audio: ${why}`);
    }
    const opened = await app.sori.blobs.open(job.redacted_blob_key).catch((err: unknown) => {
      // Removed between the row's read and now (the job expired or was deleted meanwhile).
      if (err instanceof BlobNotFoundError) throw new ApiError("H0004", "no redacted audio: it is no longer stored");
      throw err;
    });
    try {
      const { size } = await fs.promises.stat(opened.path);
      const body = fs.createReadStream(opened.path);
      // A spool copy of a remote blob is removed once sent (or once the client went away).
      body.on("close", () => void opened.release().catch(() => {}));
      return reply
        .header("content-type", "audio/wav")
        .header("content-length", size)
        .header("content-disposition", `attachment; filename="${job.id}.redacted.wav"`)
        .send(body);
    } catch (err) {
      await opened.release();
      throw err;
    }
  });
}
