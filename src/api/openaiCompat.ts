// POST /v1/audio/transcriptions: OpenAI's transcription endpoint, so OpenAI SDKs and tools work against sori with
// only a base URL and a token from /v1/authenticate (docs/extras.md). The request becomes an ordinary job (same
// queue, workers, limits and retention, listed by GET /v1/transcribe); the call waits for it and answers in
// OpenAI's shapes, errors included: `{"error": {"message", "type", "param", "code"}}` with sori's code (the bodies
// are rendered in openaiBody.ts).
import fs from "node:fs";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { containerDuration } from "../audio/duration.js";
import { AUDIO_PART_TYPES, detectFormat } from "../audio/format.js";
import { ConfigSchema, parseJobConfig } from "../domain/jobConfig.js";
import { WHISPER_LANGUAGES } from "../domain/languages.js";
import { ApiError } from "../errors.js";
import { checkKnownSpeakers } from "../speakers/index.js";
import { getJob, type JobRow } from "../storage/jobs.js";
import { readResults } from "../storage/stored.js";
import { checkBeforeUpload, checkQuotaFor, queueJob } from "./admission.js";
import { requireClient } from "./auth.js";
import { PII_NEEDS_USE_FORM } from "./configRules.js";
import { toApiError } from "./errorMapping.js";
import {
  OPENAI_FORMATS,
  OpenAiError,
  type OpenAiFormat,
  OpenAiJson,
  OpenAiVerbose,
  openAiBody,
  openAiError,
} from "./openaiBody.js";
import { type Route, route, Text } from "./route.js";
import { readUpload, singleField, type Upload } from "./upload.js";

/** OpenAI model names and what sori runs for them. */
export const OPENAI_MODELS: Record<string, "whisper" | "sommers"> = {
  "whisper-1": "whisper",
  "gpt-4o-transcribe": "whisper",
  "gpt-4o-mini-transcribe": "whisper",
  whisper: "whisper",
  sommers: "sommers",
};

const OPENAI_TEXT_PARTS = [
  "model",
  "language",
  "prompt",
  "response_format",
  "temperature",
  "timestamp_granularities[]",
  "timestamp_granularities",
  "stream",
  // Extensions (docs/pii.md): OpenAI has no such fields.
  "use_pii_redaction",
  "pii_redaction",
  // Extension (docs/speakers.md), where SORI_SPEAKERS is on.
  "speaker_identification",
];

// The multipart form as OpenAI documents it, for the OpenAPI document only: the handler reads it as a stream after
// the size and admission checks, and openAiFields/toJobConfig check its fields (with the messages OpenAI's clients
// expect).
const OpenAiForm = z.object({
  file: z.string().meta({ format: "binary" }),
  model: z.enum(Object.keys(OPENAI_MODELS) as [string, ...string[]]),
  language: z.string().optional(),
  prompt: z.string().optional(),
  response_format: z.enum(OPENAI_FORMATS).optional(),
  temperature: z.number().min(0).max(1).optional(),
  "timestamp_granularities[]": z.array(z.enum(["word", "segment"])).optional(),
  stream: z.boolean().optional(),
  use_pii_redaction: z.boolean().optional().meta({ description: "Extension (docs/pii.md): redact personal data" }),
  // JSON parts (encoding below): the job config's objects, described by the same schemas.
  pii_redaction: ConfigSchema.shape.pii_redaction.meta({
    description:
      'Extension (docs/pii.md): the job config\'s pii_redaction object, as a JSON part, e.g. {"mode":"mask"}; needs use_pii_redaction',
  }),
  speaker_identification: ConfigSchema.shape.speaker_identification.meta({
    description:
      'Extension where the server enables it (docs/speakers.md): the job config\'s speaker_identification object, as a JSON part, e.g. {"speakers":[]}; the audio is diarized, and verbose_json segments carry spk and spk_name',
  }),
});
const transcriptions = {
  method: "post",
  path: "/v1/audio/transcriptions",
  summary: "OpenAI-compatible synchronous transcription (extra)",
  auth: true,
  upload: {
    form: OpenAiForm,
    encoding: {
      file: { contentType: AUDIO_PART_TYPES },
      pii_redaction: { contentType: "application/json" },
      speaker_identification: { contentType: "application/json" },
    },
    // The job config's rule (configRules.ts): a pii_redaction part needs use_pii_redaction=true.
    rules: [PII_NEEDS_USE_FORM],
  },
  responses: {
    200: {
      description: "The transcript in the asked response_format (text, srt and vtt as text/plain)",
      content: { "application/json": z.union([OpenAiJson, OpenAiVerbose]), "text/plain": Text },
    },
  },
  errors: ["H0001", "H0010", "H0002", "H0004", "H0005", "H0006", "A0001", "A0002"],
  errorBody: OpenAiError,
} satisfies Route;

export const openaiDeclarations: Route[] = [transcriptions];

/** Longest a call waits for its job (queue wait included) before answering E500 with the job id to read later. */
const MAX_WAIT_MS = 30 * 60_000;

export interface OpenAiRequest {
  model: string | undefined;
  language: string | undefined;
  prompt: string | undefined;
  response_format: string | undefined;
  temperature: string | undefined;
  timestamp_granularities: string[];
  stream: string | undefined;
  use_pii_redaction?: string | undefined;
  pii_redaction?: string | undefined;
  speaker_identification?: string | undefined;
}

/** The job config for an OpenAI request: the OpenAI fields checked, then the spec's config rules (H0001). */
export function toJobConfig(
  r: OpenAiRequest,
  opts: { speakers?: boolean } = {},
): {
  config: ReturnType<typeof parseJobConfig>;
  format: OpenAiFormat;
  words: boolean;
  segments: boolean;
} {
  if (!r.model) throw new ApiError("H0001", "model is required (whisper-1, whisper or sommers)");
  const model = OPENAI_MODELS[r.model];
  if (!model) throw new ApiError("H0001", `model must be one of ${Object.keys(OPENAI_MODELS).join(", ")}`);
  const format = (r.response_format ?? "json") as OpenAiFormat;
  if (!OPENAI_FORMATS.includes(format))
    throw new ApiError("H0001", `response_format must be one of ${OPENAI_FORMATS.join(", ")}`);
  if (r.stream === "true")
    throw new ApiError("H0001", "stream is not supported: sori answers once the transcription is complete");
  if (r.temperature !== undefined) {
    const t = Number(r.temperature);
    if (r.temperature.trim() === "" || !Number.isFinite(t) || t < 0 || t > 1)
      throw new ApiError("H0001", "temperature must be a number from 0 to 1");
  }
  for (const g of r.timestamp_granularities) {
    if (g !== "word" && g !== "segment")
      throw new ApiError("H0001", "timestamp_granularities[] must be word or segment");
  }
  const words = r.timestamp_granularities.includes("word");
  if (r.timestamp_granularities.length > 0 && format !== "verbose_json") {
    throw new ApiError("H0001", "timestamp_granularities[] requires response_format verbose_json");
  }
  const segments = r.timestamp_granularities.length === 0 || r.timestamp_granularities.includes("segment");

  const lang = r.language?.trim().toLowerCase() || undefined;
  if (lang !== undefined && !WHISPER_LANGUAGES.has(lang))
    throw new ApiError("H0001", "language must be an ISO 639-1 code");
  const spec: Record<string, unknown> = {
    model_name: model,
    use_word_timestamp: words,
    // Segments of whole sentences, about as long as OpenAI's (the splitter's default); with it off, a speaker turn
    // would be one segment.
    use_paragraph_splitter: true,
  };
  if (r.use_pii_redaction !== undefined && r.use_pii_redaction !== "true" && r.use_pii_redaction !== "false")
    throw new ApiError("H0001", "use_pii_redaction must be true or false");
  if (r.use_pii_redaction === "true") spec.use_pii_redaction = true;
  if (r.pii_redaction !== undefined) {
    try {
      spec.pii_redaction = JSON.parse(r.pii_redaction);
    } catch {
      throw new ApiError("H0001", "pii_redaction must be a JSON object");
    }
  }
  if (opts.speakers && r.speaker_identification !== undefined) {
    // OpenAI has no diarization field: naming speakers diarizes, the count estimated.
    spec.use_diarization = true;
    try {
      spec.speaker_identification = JSON.parse(r.speaker_identification);
    } catch {
      throw new ApiError("H0001", "speaker_identification must be a JSON object");
    }
  }
  if (lang !== undefined) spec.language = lang;
  // No language: OpenAI detects among all languages, not among the spec route's default candidates.
  else if (model === "whisper")
    Object.assign(spec, { language: "detect", language_candidates: [...WHISPER_LANGUAGES] });
  return { config: parseJobConfig(JSON.stringify(spec), opts), format, words, segments };
}

export async function openaiRoutes(app: FastifyInstance): Promise<void> {
  const { config, blobs } = app.sori;
  app.addHook("onRequest", requireClient);
  app.setErrorHandler((err, req, reply) => {
    const e = toApiError(err);
    if (e.code === "E500") req.log.error({ err }, "unhandled error");
    reply.status(e.status).send(openAiError(e));
  });

  route(app, transcriptions, async (req, reply) => {
    const client = req.client!;
    // An upload known to be too large is answered without storing it (lingeringClose.ts reads and drops the rest).
    if (Number(req.headers["content-length"] ?? 0) > config.openaiMaxFileBytes + 1024 * 1024) {
      throw new ApiError("H0005", `file exceeds this endpoint's size limit of ${config.openaiMaxFileBytes} bytes`);
    }
    await checkBeforeUpload(app, client);
    const upload = await readUpload(req, {
      dataDir: config.dataDir,
      maxBytes: config.openaiMaxFileBytes,
      tooLarge: `file exceeds this endpoint's size limit of ${config.openaiMaxFileBytes} bytes`,
      textParts: OPENAI_TEXT_PARTS,
    });
    const blob = upload.file;
    let blobKey: string | null = null;
    let queued = false; // from then on the blob is the job's, removed when the job ends
    try {
      const fields = openAiFields(upload);
      if (!blob) throw new ApiError("H0001", "file is required");
      if (blob.bytes === 0) throw new ApiError("H0010", "the file is empty");
      const {
        config: jobConfig,
        format,
        words,
        segments,
      } = toJobConfig(fields, {
        speakers: config.speakers.enabled,
      });
      if (jobConfig.speaker_identification) {
        await checkKnownSpeakers(app.sori.store, client.id, jobConfig.speaker_identification.speakers);
      }
      const fileFormat = await detectFormat(blob.path);
      const audioS = await containerDuration(blob.path, fileFormat);
      const limitS = Math.min(config.openaiMaxAudioS, config.maxAudioS);
      if (audioS !== null && audioS > limitS) {
        throw new ApiError(
          "H0006",
          `audio is ${Math.round(audioS)} s long; this endpoint answers for files up to ${limitS} s (use POST /v1/transcribe for longer ones)`,
        );
      }
      await checkQuotaFor(app, client, audioS);
      const id = await queueJob(
        app,
        req,
        { client, config: jobConfig, spoolPath: blob.path, format: fileFormat, audioS, via: "openai" },
        (key) => (blobKey = key),
      );
      queued = true;
      reply.header("x-sori-job-id", id);
      const job = await waitFinal(app, req, reply, id);
      if (!job) return reply; // the caller hung up; the job goes on and can be read by its id
      if (job.state === "failed") {
        // Bad audio keeps its code (H0010 not decodable, H0006 too long); anything else is a server error.
        const code = job.error_code === "H0010" || job.error_code === "H0006" ? job.error_code : "E500";
        throw new ApiError(code, job.error_message ?? "transcription failed");
      }
      const body = openAiBody(format, readResults(job.result)?.utterances ?? [], {
        durationS: job.audio_s,
        words,
        segments,
        speakers: jobConfig.use_diarization,
      });
      if (typeof body === "string") return reply.header("content-type", "text/plain; charset=utf-8").send(body);
      return body;
    } catch (err) {
      if (blobKey && !queued) await blobs.remove(blobKey).catch(() => {});
      throw err;
    } finally {
      if (blob) await fs.promises.rm(blob.path, { force: true });
    }
  });
}

/** Polls the store until the job is final (workers may run in other processes). null when the client left. */
async function waitFinal(
  app: FastifyInstance,
  req: FastifyRequest,
  reply: FastifyReply,
  id: string,
): Promise<JobRow | null> {
  const until = Date.now() + MAX_WAIT_MS;
  let gone = false;
  reply.raw.once("close", () => (gone = !reply.raw.writableEnded));
  const pause = Math.min(250, app.sori.config.pollMs);
  while (Date.now() < until) {
    const job = await getJob(app.sori.store, id);
    if (!job || job.deleted_at !== null) throw new ApiError("H0004", "the transcription was deleted while it ran");
    if (job.state === "completed" || job.state === "failed") return job;
    if (gone) {
      req.log.info(
        { job_id: id, client_id: req.client?.id },
        "client left before the synchronous transcription finished",
      );
      return null;
    }
    await new Promise((r) => setTimeout(r, pause));
  }
  throw new ApiError(
    "E500",
    `not finished within ${MAX_WAIT_MS / 60_000} min; read it later: GET /v1/transcribe/${id}`,
  );
}

/** The OpenAI request's text fields (the file is spooled by the shared readUpload). */
function openAiFields(upload: Upload): OpenAiRequest {
  const one = (name: string): string | undefined => singleField(upload, name);
  return {
    model: one("model"),
    language: one("language"),
    prompt: one("prompt"),
    response_format: one("response_format"),
    temperature: one("temperature"),
    timestamp_granularities: [
      ...(upload.fields.get("timestamp_granularities[]") ?? []),
      ...(upload.fields.get("timestamp_granularities") ?? []),
    ],
    stream: one("stream"),
    use_pii_redaction: one("use_pii_redaction"),
    pii_redaction: one("pii_redaction"),
    speaker_identification: one("speaker_identification"),
  };
}
