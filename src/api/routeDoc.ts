// What each route declares about itself for GET /openapi.json: its parameters, bodies and answers as zod schemas,
// the same schemas the handler parses its input with or types its answer by. The document is built from these
// declarations alone (openapiDocument.ts), so a route and its description cannot drift apart; test/security/
// openapi.test.ts checks that every route Fastify registers declares one, and the HTTP tests validate real answers
// against the schemas.
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../errors.js";

export interface RouteDoc {
  method: "get" | "post" | "delete";
  /** Fastify's form (`/v1/transcribe/:id`); the document writes `{id}`. */
  path: string;
  summary: string;
  /** Needs a bearer token from POST /v1/authenticate. */
  auth?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request body by media type. */
  body?: Record<string, z.ZodType>;
  /** Per multipart part: the media type it is sent as. */
  bodyEncoding?: Record<string, { contentType: string }>;
  /** Answers that are not refusals, by status: a description and the body by media type. */
  responses: Record<number, { description: string; content?: Record<string, z.ZodType> }>;
  /** The refusals it can answer (E500 is added to every route), in the body `errorBody` names. */
  errors?: ErrorCode[];
  errorBody?: z.ZodType;
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
