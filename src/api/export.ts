// GET /v1/transcribe/{id}/export?format=srt|vtt|txt: a completed job's transcript as subtitles or plain text
// (docs/extras.md). Same access rules and read rate as the spec's read, through the shared lookup.
import type { FastifyInstance } from "fastify";
import { ApiError } from "../errors.js";
import { readJobConfig, readResults } from "../storage/stored.js";
import { CONTENT_TYPES, EXPORT_FORMATS, isExportFormat, renderExport } from "../export/formats.js";
import { requireClient } from "./auth.js";
import { findOwnJob, takeRead } from "./jobAccess.js";

export async function exportRoutes(app: FastifyInstance): Promise<void> {
  app.addHook("onRequest", requireClient);

  app.get<{ Params: { id: string }; Querystring: { format?: string } }>("/v1/transcribe/:id/export", async (req, reply) => {
    const client = req.client!;
    const format = req.query.format ?? "srt";
    if (!isExportFormat(format)) throw new ApiError("H0001", `format must be one of ${EXPORT_FORMATS.join(", ")}`);
    takeRead(app, client);
    const job = await findOwnJob(app, client, req.params.id);
    if (job.state !== "completed") {
      const why = job.state === "failed" ? "the job failed" : "the job is still transcribing";
      throw new ApiError("H0004", `no result to export: ${why}`);
    }
    const config = readJobConfig(job.config);
    const speakers = config.use_diarization ? "speaker" : config.use_multi_channel ? "channel" : null;
    const body = renderExport(format, readResults(job.result)?.utterances ?? [], { speakers });
    return reply
      .header("content-type", CONTENT_TYPES[format])
      .header("content-disposition", `attachment; filename="${job.id}.${format}"`)
      .send(body);
  });
}
