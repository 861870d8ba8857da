// GET /v1/transcribe/{id}/export?format=srt|vtt|txt: a completed job's transcript as subtitles or plain text
// (docs/extras.md). Same access rules and read rate as the spec's read, through the shared lookup.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ApiError } from "../errors.js";
import { CONTENT_TYPES, EXPORT_FORMATS, renderExport } from "../export/formats.js";
import { readJobConfig, readResults } from "../storage/stored.js";
import { requireClient } from "./auth.js";
import { findOwnJob, JobIdParams, READ_ERRORS, takeRead } from "./jobAccess.js";
import { ErrorBody, type Route, route, Text } from "./route.js";

const ExportQuery = z.object({
  format: z.enum(EXPORT_FORMATS, { error: `format must be one of ${EXPORT_FORMATS.join(", ")}` }).default("srt"),
});

const exportRoute = {
  method: "get",
  path: "/v1/transcribe/:id/export",
  summary: "A completed job as subtitles or text (extra)",
  auth: true,
  params: JobIdParams,
  query: ExportQuery,
  responses: {
    200: {
      description: "The transcript",
      content: Object.fromEntries(Object.values(CONTENT_TYPES).map((t) => [t.split(";")[0]!, Text])),
    },
  },
  errors: [...READ_ERRORS],
  errorBody: ErrorBody,
} satisfies Route;

export const exportDeclarations: Route[] = [exportRoute];

export async function exportRoutes(app: FastifyInstance): Promise<void> {
  app.addHook("onRequest", requireClient);

  route(app, exportRoute, async (req, reply) => {
    const client = req.client!;
    const { format } = req.query;
    await takeRead(app, client);
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
