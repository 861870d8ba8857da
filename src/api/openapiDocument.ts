// GET /openapi.json: an OpenAPI 3.1 description of every route, served without auth so that API tools (and the
// schemathesis run in test/security) can read it. The config object's schema is derived from the zod schema the
// submit parses with, so the two cannot drift; the rest is written out by hand from docs/api.md and docs/extras.md.
// test/security/openapi.test.ts checks that every route Fastify has is described here.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { WHISPER_LANGUAGES } from "../domain/languages.js";
import { ERROR_CODES, type ErrorCode } from "../errors.js";
import { EXPORT_FORMATS } from "../export/formats.js";
import { ConfigSchema } from "../domain/jobConfig.js";
import { LIST_MAX_LIMIT } from "./jobsList.js";
import { OPENAI_FORMATS, OPENAI_MODELS } from "./openaiCompat.js";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema): Schema => ({ "application/json": { schema } });

/** The config part as JSON Schema: zod's own export (input side: every field optional, defaults shown). */
export function configJsonSchema(): Schema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as Schema;
  // The language codes are checked by a refinement, which JSON Schema cannot express by itself.
  const props = schema.properties as Record<string, Schema>;
  props.language_candidates = { ...props.language_candidates, items: { type: "string", enum: [...WHISPER_LANGUAGES] } };
  props.language = { ...props.language, enum: ["detect", "multi", ...WHISPER_LANGUAGES] };
  return { ...schema, description: "The submit's config part. Unknown fields are ignored." };
}

/** Error responses in the spec's `{"code","msg"}` shape, one entry per HTTP status, codes listed per status. */
function errors(codes: ErrorCode[], schema = "Error"): Record<string, Schema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of [...codes, "E500" as const]) byStatus.set(ERROR_CODES[c].status, [...(byStatus.get(ERROR_CODES[c].status) ?? []), c]);
  const out: Record<string, Schema> = {};
  for (const [status, cs] of byStatus) out[String(status)] = { description: cs.map((c) => `${c}: ${ERROR_CODES[c].msg}`).join("; "), content: json(ref(schema)) };
  return out;
}

const bearer = [{ bearerAuth: [] }];
const idParam = {
  name: "id",
  in: "path",
  required: true,
  description: "Job id returned by submit. Anything else not matching the pattern is 400 H0001 (over 200 characters, 404 H0004: no route takes it).",
  schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" },
};
// Read-type routes all answer the read table's errors (src/api/jobAccess.ts).
const readErrors = errors(["H0001", "H0002", "H0003", "H0004", "H0007", "A0003"]);
const text = (type: string): Schema => ({ [type]: { schema: { type: "string" } } });

/** `metrics`: whether GET /metrics is routed (SORI_METRICS). */
export function openApiDocument(opts: { metrics: boolean }): Schema {
  const errorCodes = Object.keys(ERROR_CODES);
  return {
    openapi: "3.1.0",
    info: {
      title: "sori batch speech-to-text API",
      version: "1",
      description: "The spec's three endpoints (authenticate, submit, read) and sori's extras (docs/extras.md). Every refused call answers {\"code\",\"msg\"} (docs/errors.md), except the OpenAI-compatible endpoint, which answers OpenAI's error shape with the same codes.",
    },
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "access_token from POST /v1/authenticate" } },
      schemas: {
        Error: {
          type: "object",
          required: ["code", "msg"],
          additionalProperties: false,
          properties: { code: { type: "string", enum: errorCodes }, msg: { type: "string" } },
        },
        OpenAiError: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["message", "type", "code"],
              properties: { message: { type: "string" }, type: { type: "string" }, param: { type: ["string", "null"] }, code: { type: "string", enum: errorCodes } },
            },
          },
        },
        Credentials: {
          type: "object",
          required: ["client_id", "client_secret"],
          properties: { client_id: { type: "string" }, client_secret: { type: "string" } },
        },
        Config: configJsonSchema(),
        Utterance: {
          type: "object",
          required: ["start_at", "duration", "msg", "spk", "lang"],
          properties: {
            start_at: { type: "integer" },
            duration: { type: "integer" },
            msg: { type: "string" },
            spk: { type: "integer" },
            spk_type: { type: "string", enum: ["NORMAL"] },
            lang: { type: "string" },
          },
        },
        ReadBody: {
          type: "object",
          required: ["id", "status"],
          properties: {
            id: { type: "string" },
            status: { type: "string", enum: ["transcribing", "completed", "failed"] },
            results: {
              type: "object",
              properties: {
                utterances: { type: "array", items: ref("Utterance") },
                insight: {
                  type: "array",
                  items: { type: "object", properties: { title: { type: "string" }, summary: { type: "string" }, category: { type: "string" } } },
                },
              },
            },
            error: { type: "object", required: ["code", "message"], properties: { code: { type: "string" }, message: { type: "string" } } },
            refine_status: { type: "string", enum: ["queued", "processing", "completed", "failed"] },
            refine_error: {
              type: "object",
              required: ["code"],
              properties: { code: { type: "string", enum: ["refiner_enqueue_failed", "refiner_input_unavailable", "refiner_failed"] } },
            },
          },
        },
        Readiness: {
          type: "object",
          required: ["status", "checks"],
          properties: {
            status: { type: "string", enum: ["ready", "not_ready"] },
            not_ready: { type: "array", items: { type: "string" } },
            checks: { type: "object", additionalProperties: { type: "string" } },
          },
        },
        ListItem: {
          type: "object",
          required: ["id", "status", "created_at", "finished_at", "expires_at", "expired", "audio_duration_ms"],
          properties: {
            id: { type: "string" },
            status: { type: "string", enum: ["transcribing", "completed", "failed"] },
            created_at: { type: "string", format: "date-time" },
            finished_at: { type: ["string", "null"], format: "date-time" },
            expires_at: { type: ["string", "null"], format: "date-time" },
            expired: { type: "boolean" },
            audio_duration_ms: { type: ["integer", "null"] },
            error: { type: "object", required: ["code"], properties: { code: { type: "string" } } },
          },
        },
      },
    },
    paths: {
      "/v1/authenticate": {
        post: {
          summary: "Issue an access token",
          requestBody: {
            required: true,
            content: {
              "application/x-www-form-urlencoded": { schema: ref("Credentials") },
              "multipart/form-data": { schema: ref("Credentials") },
            },
          },
          responses: {
            "200": {
              description: "A token",
              content: json({
                type: "object",
                required: ["access_token", "expire_at"],
                properties: { access_token: { type: "string" }, expire_at: { type: "integer", description: "epoch seconds" } },
              }),
            },
            ...errors(["H0001", "H0002", "H0005", "A0003"]),
          },
        },
      },
      "/v1/transcribe": {
        post: {
          summary: "Submit a transcription job",
          security: bearer,
          requestBody: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["config", "file"],
                  properties: { config: ref("Config"), file: { type: "string", format: "binary", description: "mp4, m4a, mp3, amr, flac or wav" } },
                },
                encoding: { config: { contentType: "application/json" }, file: { contentType: "application/octet-stream" } },
              },
            },
          },
          responses: {
            "200": { description: "Queued", content: json({ type: "object", required: ["id"], additionalProperties: false, properties: { id: { type: "string" } } }) },
            ...errors(["H0001", "H0010", "H0002", "H0003", "H0005", "H0006", "A0001", "A0002"]),
          },
        },
        get: {
          summary: "List the caller's jobs, newest first (extra)",
          security: bearer,
          parameters: [
            { name: "status", in: "query", schema: { type: "string", enum: ["transcribing", "completed", "failed"] } },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: LIST_MAX_LIMIT } },
            { name: "cursor", in: "query", schema: { type: "string" }, description: "next_cursor of the previous page" },
          ],
          responses: {
            "200": {
              description: "One page",
              content: json({
                type: "object",
                required: ["transcribes", "next_cursor"],
                properties: { transcribes: { type: "array", items: ref("ListItem") }, next_cursor: { type: ["string", "null"] } },
              }),
            },
            ...errors(["H0001", "H0002", "A0003"]),
          },
        },
      },
      "/v1/transcribe/{id}": {
        get: {
          summary: "Read a job",
          security: bearer,
          parameters: [idParam, { name: "result", in: "query", schema: { type: "string", enum: ["refined"] } }],
          responses: { "200": { description: "The job", content: json(ref("ReadBody")) }, ...readErrors },
        },
        delete: {
          summary: "Delete a job's audio and result (extra)",
          security: bearer,
          parameters: [idParam],
          responses: {
            "200": {
              description: "Deleted",
              content: json({ type: "object", required: ["id", "deleted"], properties: { id: { type: "string" }, deleted: { const: true } } }),
            },
            ...errors(["H0001", "H0002", "H0003", "H0004", "A0003"]),
          },
        },
      },
      "/v1/transcribe/{id}/export": {
        get: {
          summary: "A completed job as subtitles or text (extra)",
          security: bearer,
          parameters: [idParam, { name: "format", in: "query", schema: { type: "string", enum: [...EXPORT_FORMATS], default: "srt" } }],
          responses: {
            "200": { description: "The transcript", content: { ...text("application/x-subrip"), ...text("text/vtt"), ...text("text/plain") } },
            ...readErrors,
          },
        },
      },
      "/v1/audio/transcriptions": {
        post: {
          summary: "OpenAI-compatible synchronous transcription (extra)",
          security: bearer,
          requestBody: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["file", "model"],
                  properties: {
                    file: { type: "string", format: "binary" },
                    model: { type: "string", enum: Object.keys(OPENAI_MODELS) },
                    language: { type: "string" },
                    prompt: { type: "string" },
                    response_format: { type: "string", enum: [...OPENAI_FORMATS] },
                    temperature: { type: "number", minimum: 0, maximum: 1 },
                    "timestamp_granularities[]": { type: "array", items: { type: "string", enum: ["word", "segment"] } },
                    stream: { type: "boolean" },
                  },
                },
              },
            },
          },
          responses: {
            "200": {
              description: "The transcript in the asked response_format",
              content: { "application/json": { schema: { type: "object" } }, ...text("text/plain") },
            },
            ...errors(["H0001", "H0010", "H0002", "H0004", "H0005", "H0006", "A0001", "A0002"], "OpenAiError"),
          },
        },
      },
      "/v1/callbacks/secret": {
        get: {
          summary: "The caller's callback signing secret (extra)",
          security: bearer,
          responses: {
            "200": { description: "The secret", content: json({ type: "object", required: ["secret"], properties: { secret: { type: "string" } } }) },
            ...errors(["H0002"]),
          },
        },
      },
      "/": {
        get: {
          summary: "Web console",
          responses: { "200": { description: "The console's page", content: text("text/html") }, "404": { description: "Console not built", content: text("text/plain") } },
        },
      },
      "/console/{file}": {
        get: {
          summary: "Web console assets",
          parameters: [{ name: "file", in: "path", required: true, schema: { type: "string" } }],
          responses: {
            "200": { description: "A built asset", content: { ...text("text/javascript"), ...text("text/css") } },
            "404": { description: "No such asset", content: json(ref("Error")) },
          },
        },
      },
      "/healthz": {
        get: {
          summary: "Liveness",
          responses: { "200": { description: "Up", content: json({ type: "object", required: ["status"], properties: { status: { const: "ok" } } }) } },
        },
      },
      "/readyz": {
        get: {
          summary: "Readiness: the store answers and this process's engines are up (docs/observability.md)",
          responses: {
            "200": { description: "Ready", content: json(ref("Readiness")) },
            "503": { description: "Not ready", content: json(ref("Readiness")) },
          },
        },
      },
      ...(opts.metrics
        ? { "/metrics": { get: { summary: "Prometheus metrics (docs/observability.md)", responses: { "200": { description: "Prometheus text format", content: text("text/plain") } } } } }
        : {}),
      "/openapi.json": {
        get: { summary: "This document", responses: { "200": { description: "OpenAPI 3.1", content: json({ type: "object" }) } } },
      },
    },
  };
}

export async function openapiRoutes(app: FastifyInstance): Promise<void> {
  // Built once: it depends on nothing but the code.
  const doc = openApiDocument({ metrics: app.sori.config.metrics.enabled });
  app.get("/openapi.json", async () => doc);
}
