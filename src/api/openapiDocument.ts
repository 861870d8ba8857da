// GET /openapi.json: an OpenAPI 3.1 description of every route, served without auth so that API tools (and the
// schemathesis run in test/security) can read it. Nothing here describes a route: each route module declares its
// parameters, bodies and answers as the zod schemas that Fastify checks its requests with (route.ts), and this
// file only turns those declarations into the document (zod's own JSON Schema export). test/security/
// openapi.test.ts checks that every route Fastify has is described, and the HTTP tests that real answers match.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { WHISPER_LANGUAGES } from "../domain/languages.js";
import { ERROR_CODES, type ErrorCode } from "../errors.js";
import { Liveness, Readiness } from "../metrics/health.js";
import { authDeclarations } from "./auth.js";
import { callbackSecretDeclarations } from "./callbackSecret.js";
import { CALLBACK_URL_PATTERN, CONFIG_RULES, CONFIG_RULES_TEXT } from "./configRules.js";
import { consoleDeclarations } from "./console.js";
import { exportDeclarations } from "./export.js";
import { jobsListDeclarations } from "./jobsList.js";
import { openaiDeclarations } from "./openaiCompat.js";
import { redactedAudioDeclarations } from "./redactedAudio.js";
import { operationId, type Route, route, Text } from "./route.js";
import { speakerDeclarations } from "./speakers.js";
import { streamingDeclarations } from "./streaming.js";
import { transcribeDeclarations } from "./transcribe.js";

type Schema = Record<string, unknown>;

// The operations routes live with the metrics (src/metrics/health.ts), below the HTTP layer, and are also served by
// the metrics server without it (src/metrics/server.ts): they are registered there, their shapes declared there
// and wrapped here.
function healthDeclarations(metrics: boolean): Route[] {
  const docs: Route[] = [
    {
      method: "get",
      path: "/healthz",
      summary: "Liveness",
      responses: { 200: { description: "Up", content: { "application/json": Liveness } } },
    },
    {
      method: "get",
      path: "/readyz",
      summary: "Readiness: the store answers and this process's engines are up (docs/observability.md)",
      responses: {
        200: { description: "Ready", content: { "application/json": Readiness } },
        503: { description: "Not ready", content: { "application/json": Readiness } },
      },
    },
  ];
  if (metrics) {
    docs.push({
      method: "get",
      path: "/metrics",
      summary: "Prometheus metrics (docs/observability.md)",
      responses: { 200: { description: "Prometheus text format", content: { "text/plain": Text } } },
    });
  }
  return docs;
}

const self = {
  method: "get",
  path: "/openapi.json",
  summary: "This document",
  responses: {
    200: {
      description: "OpenAPI 3.1",
      content: { "application/json": z.looseObject({ openapi: z.literal("3.1.0") }) },
    },
  },
} satisfies Route;

/** Every route's declaration (`metrics`: whether GET /metrics is routed, SORI_METRICS; `streaming`: whether the
 * streaming extension is on, SORI_STREAM_SESSIONS > 0; `speakers`: whether known speakers are, SORI_SPEAKERS). */
export function routeDeclarations(opts: { metrics: boolean; streaming?: boolean; speakers?: boolean }): Route[] {
  return [
    ...authDeclarations,
    ...transcribeDeclarations,
    ...jobsListDeclarations,
    ...exportDeclarations,
    ...redactedAudioDeclarations,
    ...openaiDeclarations,
    ...callbackSecretDeclarations,
    ...consoleDeclarations,
    ...healthDeclarations(opts.metrics),
    ...(opts.streaming ? streamingDeclarations : []),
    ...(opts.speakers ? speakerDeclarations : []),
    self,
  ];
}

/** Collects the named schemas (`.meta({id})`) that the conversions meet, as the document's components. */
class Converter {
  readonly components: Record<string, Schema> = {};

  /** A zod schema as JSON Schema; named parts (the schema itself included) become `#/components/schemas/<id>` references. Request parts are
   * converted as zod's input (defaults optional), answers as its output. */
  convert(schema: z.ZodType, io: "input" | "output"): Schema {
    const out = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" }) as Schema;
    const {
      $schema: _s,
      $defs,
      ...rest
    } = JSON.parse(JSON.stringify(out).replaceAll('"#/$defs/', '"#/components/schemas/')) as Schema;
    // A named schema at the top comes out as a reference to its own definition, which joins the others.
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, Schema>)) this.components[id] = def;
    return rest;
  }
}

// `::` is Fastify's escaped colon, a literal one (`/v1/transcribe::streaming`).
const openApiPath = (path: string): string =>
  path.replace(/::|:([A-Za-z0-9_]+)/g, (_m, name?: string) => (name ? `{${name}}` : ":"));

function parameters(c: Converter, where: "path" | "query", shape: z.ZodType | undefined): Schema[] {
  if (!shape) return [];
  const object = c.convert(shape, "input") as { properties?: Record<string, Schema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema;
    const required = where === "path" || (object.required ?? []).includes(name);
    return { name, in: where, required, ...(description ? { description } : {}), schema: rest };
  });
}

/** Refusals, one entry per HTTP status, with the codes each status stands for. */
function errorResponses(c: Converter, codes: readonly ErrorCode[], body: z.ZodType): Record<string, Schema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, "E500" as const]) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const schema = c.convert(body, "output");
  return Object.fromEntries(
    [...byStatus].map(([status, cs]) => [
      String(status),
      {
        description: cs.map((code) => `${code}: ${ERROR_CODES[code].msg}`).join("; "),
        content: { "application/json": { schema } },
      },
    ]),
  );
}

/** The request body by media type: the checked body under each of its types, or the streamed upload's form. */
function requestBody(c: Converter, doc: Route): Schema | undefined {
  let content: Record<string, Schema> | undefined;
  if (doc.upload) {
    const { form, encoding, rules } = doc.upload;
    const schema = c.convert(form, "input");
    if (rules) schema.allOf = rules;
    content = { "multipart/form-data": { schema, ...(encoding ? { encoding } : {}) } };
  } else if (doc.body) {
    const schema = c.convert(doc.body, "input");
    content = Object.fromEntries((doc.bodyTypes ?? ["application/json"]).map((type) => [type, { schema }]));
  }
  return content && { required: true, content };
}

function operation(c: Converter, doc: Route): Schema {
  const params = [...parameters(c, "path", doc.params), ...parameters(c, "query", doc.query)];
  const responses: Schema = {};
  for (const [status, res] of Object.entries(doc.responses)) {
    const content =
      res.content &&
      Object.fromEntries(Object.entries(res.content).map(([type, s]) => [type, { schema: c.convert(s, "output") }]));
    responses[status] = {
      description: res.description,
      ...(content ? { content } : {}),
      ...(res.links ? { links: res.links } : {}),
    };
  }
  if (doc.errors && doc.errorBody) Object.assign(responses, errorResponses(c, doc.errors, doc.errorBody));
  const body = requestBody(c, doc);
  return {
    operationId: operationId(doc),
    summary: doc.summary,
    ...(doc.auth ? { security: [{ bearerAuth: [] }] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

/** The config part: what zod checks by refinements and parseJobConfig by code, which zod's export cannot carry
 * (configRules.ts). Without known speakers, speaker_identification is dropped unread, so it is not described. */
function withConfigRules(config: Schema | undefined, speakers: boolean): void {
  const props = config?.properties as Record<string, Schema> | undefined;
  if (!config || !props) return;
  props.language_candidates = { ...props.language_candidates, items: { type: "string", enum: [...WHISPER_LANGUAGES] } };
  props.language = { ...props.language, enum: ["detect", "multi", ...WHISPER_LANGUAGES] };
  props.callback_url = { ...props.callback_url, pattern: CALLBACK_URL_PATTERN };
  if (!speakers) delete props.speaker_identification;
  config.allOf = CONFIG_RULES.filter((r) => speakers || !JSON.stringify(r).includes("speaker_identification"));
  config.description = `${config.description ?? ""} ${CONFIG_RULES_TEXT}`.trim();
}

export function openApiDocument(opts: {
  metrics: boolean;
  streaming?: boolean;
  speakers?: boolean;
}): Schema & { openapi: "3.1.0" } {
  const c = new Converter();
  const paths: Record<string, Schema> = {};
  for (const doc of routeDeclarations(opts)) {
    const p = openApiPath(doc.path);
    paths[p] = { ...paths[p], [doc.method]: operation(c, doc) };
  }
  withConfigRules(c.components.Config, opts.speakers ?? false);
  return {
    openapi: "3.1.0" as const,
    info: {
      title: "sori batch speech-to-text API",
      version: "1",
      description:
        'The spec\'s three endpoints (authenticate, submit, read) and sori\'s extras (docs/extras.md). Every refused call answers {"code","msg"} (docs/errors.md), except the OpenAI-compatible endpoint, which answers OpenAI\'s error shape with the same codes.',
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "access_token from POST /v1/authenticate",
        },
      },
      schemas: c.components,
    },
    paths,
  };
}

export async function openapiRoutes(app: FastifyInstance): Promise<void> {
  // Built once: it depends on nothing but the code.
  const doc = openApiDocument({
    metrics: app.sori.config.metrics.enabled,
    streaming: app.sori.config.stream.sessions > 0,
    speakers: app.sori.config.speakers.enabled,
  });
  route(app, self, async () => doc);
}
