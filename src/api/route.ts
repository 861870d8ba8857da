// One declaration per route: its method and path, its parameters, query and body as zod schemas, its answers and its
// refusals. `route()` registers the declaration with Fastify, which checks the request against those schemas before
// the handler runs (fastify-type-provider-zod's validator) and types the handler's request by them (Fastify's type
// providers); a refused request is 400 H0001 with the failing schema's message (errorMapping.ts), so each request
// schema words its refusal and names the field in it. GET /openapi.json is built from the same declarations
// (openapiDocument.ts), so a route, its checks and its description cannot drift apart; test/security/
// openapi.test.ts checks that every route Fastify registers is declared, and the HTTP tests validate real answers
// against the document.
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteShorthandOptions,
} from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../errors.js";

export interface Route {
  method: "get" | "post" | "delete";
  /** Fastify's form (`/v1/transcribe/:id`); the document writes `{id}`. */
  path: string;
  summary: string;
  /** Needs a bearer token from POST /v1/authenticate. */
  auth?: boolean;
  /** Checked before the handler runs, in this order (Fastify's): params, body, query. */
  params?: z.ZodType;
  query?: z.ZodType;
  /** The request body, checked before the handler runs, documented under each of `bodyTypes`. */
  body?: z.ZodType;
  bodyTypes?: readonly string[];
  /** A multipart upload that the handler reads as a stream (it refuses before storing what it can): documented
   * only, its parts checked by the handler. */
  upload?: {
    form: z.ZodType;
    encoding?: Record<string, { contentType: string }>;
    /** Cross-field rules of the form as JSON Schema (`allOf`), so that a form the document allows is one the
     * handler accepts. */
    rules?: Record<string, unknown>[];
  };
  /** Answers that are not refusals, by status: a description, the body by media type, and the operations that can
   * follow it with a value of the body (OpenAPI links, which schemathesis's stateful phase follows): by name, the
   * other operation's id (operationId) and its parameters as runtime expressions (`$response.body#/id`). */
  responses: Record<
    number,
    {
      description: string;
      content?: Record<string, z.ZodType>;
      links?: Record<string, { operationId: string; parameters: Record<string, string> }>;
    }
  >;
  /** The refusals it can answer (E500 is added to every route), in the body `errorBody` names. */
  errors?: readonly ErrorCode[];
  errorBody?: z.ZodType;
}

type Part<R, K extends "params" | "query" | "body"> = R extends Record<K, infer S extends z.ZodType> ? S : undefined;
type RequestSchema<R extends Route> = {
  params: Part<R, "params">;
  querystring: Part<R, "query">;
  body: Part<R, "body">;
};

/** The request a route's handler gets: its parts as its schemas' output, through Fastify's type provider. */
export type RouteRequest<R extends Route> = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  RequestSchema<R>,
  ZodTypeProvider
>;

/** What a handler may return: a JSON answer the route declares, or the reply it sent itself. */
type JsonAnswer<R extends Route> = {
  [S in keyof R["responses"]]: R["responses"][S] extends { content: { "application/json": infer B extends z.ZodType } }
    ? z.output<B>
    : never;
}[keyof R["responses"]];

export type RouteHandler<R extends Route> = (
  req: RouteRequest<R>,
  reply: FastifyReply,
) => Promise<JsonAnswer<R> | FastifyReply>;

/** The schemas Fastify checks a route's request with (the server's validator compiler runs them: server.ts).
 * Answers are not given: Fastify sends them as it does without a schema (JSON.stringify), byte for byte as before. */
export function requestSchema<R extends Route>(route: R): RequestSchema<R> {
  const parts = { params: route.params, querystring: route.query, body: route.body };
  return Object.fromEntries(Object.entries(parts).filter(([, s]) => s !== undefined)) as RequestSchema<R>;
}

/** The route's operationId in the document: its method and path in snake case (`get_v1_transcribe_id_export`). */
export const operationId = (r: Pick<Route, "method" | "path">): string =>
  `${r.method}${r.path}`
    .replace(/::/g, "_")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/_+$/, "")
    .toLowerCase();

/** Registers a declared route; `options` are Fastify's (hooks that run before the checks, for instance). */
export function route<R extends Route>(
  app: FastifyInstance,
  declared: R,
  handler: RouteHandler<R>,
  options: Omit<RouteShorthandOptions, "schema"> = {},
): void {
  app.route({
    ...options,
    schema: requestSchema(declared),
    method: declared.method.toUpperCase() as Uppercase<Route["method"]>,
    url: declared.path,
    handler: handler as (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  });
}

const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** The spec's refusal body. */
export const ErrorBody = z
  .object({ code: z.enum(ERROR_CODE_LIST), msg: z.string() })
  .meta({ id: "Error", description: "Every refused call (docs/errors.md)" });

/** A body that is plain text (subtitles, the console's files, Prometheus metrics). */
export const Text = z.string();

/** Epoch-independent integer (milliseconds, counts). */
export const Int = z.number().int();
