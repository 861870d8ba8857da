// Builds the HTTP app: one plugin per route group, the shared context decorated once, and one error handler that
// turns every failure into the spec's `{"code","msg"}` body.
import formbody from "@fastify/formbody";
import multipart from "@fastify/multipart";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { ApiError, isApiError } from "../errors.js";
import { authRoutes } from "./auth.js";
import type { AppContext } from "./context.js";
import { callbackSecretRoutes } from "./callbackSecret.js";
import { consoleRoutes } from "./console.js";
import { exportRoutes } from "./export.js";
import { jobsListRoutes } from "./jobsList.js";
import { openaiRoutes } from "./openai.js";
import { transcribeRoutes } from "./transcribe.js";

export async function buildServer(ctx: AppContext, log: Logger): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // Job ids and paths are short; anything longer is abuse.
    routerOptions: { maxParamLength: 200 },
    bodyLimit: 1024 * 1024, // non-multipart bodies (authenticate) are small
    trustProxy: false,
  });
  app.decorate("sori", ctx);
  app.decorateRequest("client", null);

  await app.register(formbody);
  await app.register(multipart, {
    limits: { files: 1, fields: 10, parts: 20, fieldSize: 1024 * 1024, headerPairs: 100 },
    throwFileSizeLimit: true,
  });

  app.setErrorHandler((err, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.code === "E500") req.log.error({ err }, "unhandled error");
    reply.status(apiErr.status).send(apiErr.toBody());
  });
  app.setNotFoundHandler((_req, reply) => {
    reply.status(404).send(new ApiError("H0004", "no such endpoint").toBody());
  });

  await app.register(authRoutes);
  await app.register(transcribeRoutes);
  // Beyond the spec (docs/extras.md).
  await app.register(exportRoutes);
  await app.register(jobsListRoutes);
  await app.register(openaiRoutes);
  await app.register(callbackSecretRoutes);
  await app.register(consoleRoutes);
  app.get("/healthz", async () => ({ status: "ok" }));
  return app;
}

/** Framework errors (bad content type, body too large, malformed JSON...) are the client's: H0001 or H0005. */
export function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e.code === "FST_REQ_FILE_TOO_LARGE") return new ApiError("H0005");
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") return new ApiError("H0001", "request body too large");
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError("H0001", e.message ?? "invalid request");
  }
  return new ApiError("E500", "internal server error");
}
