// Builds the HTTP app: one plugin per route group, the shared context decorated once, and one error handler that
// turns every failure into the spec's `{"code","msg"}` body.
import formbody from "@fastify/formbody";
import multipart from "@fastify/multipart";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { validatorCompiler } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import { ApiError } from "../errors.js";
import { healthRoutes } from "../metrics/health.js";
import { recordApiError } from "../metrics/index.js";
import { authRoutes } from "./auth.js";
import { callbackSecretRoutes } from "./callbackSecret.js";
import { clientErrorHandler, frameworkErrors } from "./clientError.js";
import { consoleRoutes } from "./console.js";
import type { AppContext } from "./context.js";
import { toApiError } from "./errorMapping.js";
import { exportRoutes } from "./export.js";
import { jobsListRoutes } from "./jobsList.js";
import { lingeringClose } from "./lingeringClose.js";
import { methodNotAllowed } from "./methodNotAllowed.js";
import { openaiRoutes } from "./openaiCompat.js";
import { openapiRoutes } from "./openapiDocument.js";
import { redactedAudioRoutes } from "./redactedAudio.js";
import { speakerRoutes } from "./speakers.js";
import { streamingRoutes } from "./streaming.js";
import { transcribeRoutes } from "./transcribe.js";
import { FORM_LIMITS } from "./upload.js";

export async function buildServer(ctx: AppContext, log: Logger): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // Job ids and paths are short; anything longer is abuse.
    routerOptions: { maxParamLength: 200 },
    bodyLimit: 1024 * 1024, // non-multipart bodies (authenticate) are small
    trustProxy: false,
    clientErrorHandler, // parser-level refusals in the spec's shape too
    frameworkErrors,
  });
  // Routes declare their request's schemas in zod (route.ts); this runs them.
  app.setValidatorCompiler(validatorCompiler);
  app.decorate("sori", ctx);
  app.decorateRequest("client", null);

  await app.register(formbody);
  await app.register(multipart, {
    limits: {
      files: 1,
      fields: FORM_LIMITS.textParts,
      parts: FORM_LIMITS.parts,
      fieldSize: FORM_LIMITS.textBytes,
      headerPairs: 100,
    },
    throwFileSizeLimit: true,
  });

  app.setErrorHandler((err, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.code === "E500") req.log.error({ err }, "unhandled error");
    recordApiError(apiErr.code);
    reply.status(apiErr.status).send(apiErr.toBody());
  });
  // An answer sent before the body was read (a bad token, a limit hit, a bad part) leaves the rest of the body unread:
  // a client that writes its whole body before it reads would get a reset instead of the answer, and on a keep-alive
  // connection its next request would never be parsed (a hang found by test/security/abuse.test.ts). The rest is
  // read and dropped, within bounds, then the connection is cut (lingeringClose.ts).
  app.addHook("onSend", async (req, reply, payload) => {
    if (!req.raw.complete) lingeringClose(req.raw, reply.raw);
    return payload;
  });
  // 405 with Allow for a known path and a method it lacks; 404 for an unknown path (answered before any body parsing).
  methodNotAllowed(app);
  app.setNotFoundHandler((_req, reply) => {
    recordApiError("H0004");
    reply.status(404).send(new ApiError("H0004", "no such endpoint").toBody());
  });

  await app.register(authRoutes);
  await app.register(transcribeRoutes);
  // Beyond the spec (docs/extras.md).
  await app.register(exportRoutes);
  await app.register(redactedAudioRoutes); // docs/pii.md
  await app.register(jobsListRoutes);
  await app.register(openaiRoutes);
  await app.register(callbackSecretRoutes);
  await app.register(consoleRoutes);
  if (ctx.config.stream.sessions > 0) await app.register(streamingRoutes); // docs/streaming.md
  if (ctx.config.speakers.enabled) await app.register(speakerRoutes); // docs/speakers.md
  // /healthz, /readyz and /metrics (docs/observability.md).
  await app.register(healthRoutes, {
    store: ctx.store,
    engines: ctx.engines ?? [],
    metrics: ctx.config.metrics.enabled,
  });
  await app.register(openapiRoutes); // GET /openapi.json, no auth
  return app;
}
