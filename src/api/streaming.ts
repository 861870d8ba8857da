// GET /v1/transcribe:streaming, an extension (docs/streaming.md): RTZR's streaming protocol over WebSocket, for the
// public clients (livekit-plugins-rtzr, pipecat-rtzr). Routed only when SORI_STREAM_SESSIONS > 0. Everything that
// can be refused before the upgrade is refused as HTTP with the spec's `{"code","msg"}` body (the clients map the
// handshake's status: 400, 401, 429); what happens after it ends with an error answer and a close code.

import websocket from "@fastify/websocket";
import type { FastifyInstance, FastifyRequest, FastifySchemaValidationError } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { forStreamEngines, loadModelRegistry } from "../engine/models.js";
import { ApiError } from "../errors.js";
import { claimStreamSession, endStreamSession, touchStreamSessions } from "../storage/streamSessions.js";
import { StreamHost, type StreamTenant } from "../streaming/host.js";
import { StreamQuerySchema, streamQueryRefusal } from "../streaming/query.js";
import { CLOSE, type SessionIo } from "../streaming/session.js";
import { bearerClient } from "./auth.js";
import { ErrorBody, type Route, requestSchema } from "./route.js";
import { admitStream } from "./streamAdmission.js";
import { startGrpcStreaming } from "./streamingGrpc.js";

export const STREAM_PATH = "/v1/transcribe::streaming"; // `::` is a literal colon for Fastify

const stream = {
  method: "get",
  path: STREAM_PATH,
  summary:
    "Streaming recognition over WebSocket (extension, docs/streaming.md): binary audio frames and the text frame EOS in, JSON answers out",
  auth: true,
  query: StreamQuerySchema,
  responses: { 101: { description: "Switching to the WebSocket protocol" } },
  errors: ["H0001", "H0002", "A0001", "A0002"],
  errorBody: ErrorBody,
} satisfies Route;

export const streamingDeclarations: Route[] = [stream];

declare module "fastify" {
  interface FastifyRequest {
    /** When the caller's token expires (epoch ms): the session ends then. */
    tokenExpiresAt: number | null;
    /** The admitted session's client and quota (streamAdmission.ts). */
    streamTenant: StreamTenant | null;
  }
}

export async function streamingRoutes(app: FastifyInstance): Promise<void> {
  const { config } = app.sori;
  const models = forStreamEngines(loadModelRegistry(config.modelsDir, config.modelsFile, config.python));
  const host = new StreamHost(config.stream, config.python, models, (line) => app.log.debug({ engine: line }), {
    claim: (id, clientId, max) => claimStreamSession(app.sori.store, id, clientId, max),
    touch: (ids) => touchStreamSessions(app.sori.store, ids),
    end: (id, clientId, audioS) => endStreamSession(app.sori.store, id, clientId, audioS),
  });
  const grpc = config.stream.grpcPort > 0 ? await startGrpcStreaming(app.sori, host, app.log) : null;
  app.addHook("onClose", async () => {
    await grpc?.close();
    await host.stop();
  });
  app.decorateRequest("tokenExpiresAt", null);
  app.decorateRequest("streamTenant", null);
  await app.register(websocket, { options: { maxPayload: config.stream.maxFrameBytes } });

  // Refused as HTTP before the upgrade, in this order: the token, the query (the route's schema, each problem worded
  // `field: problem` by queryRefusal), the host's open sessions, the usage quota, the client's open sessions.
  async function admitToken(req: FastifyRequest): Promise<void> {
    const { client, expiresAt } = await bearerClient(app.sori, req.headers.authorization);
    req.client = client;
    req.tokenExpiresAt = expiresAt;
  }
  async function admitSession(req: FastifyRequest): Promise<void> {
    if (!req.client) throw new ApiError("H0002", "not authenticated"); // cannot happen: admitToken ran first
    req.streamTenant = await admitStream(app.sori, host, req.client);
  }
  const queryRefusal = ([issue]: FastifySchemaValidationError[]): Error =>
    new ApiError(
      "H0001",
      streamQueryRefusal(issue?.instancePath.split("/").filter(Boolean) ?? [], issue?.message ?? "invalid"),
    );

  const checks = { schema: requestSchema(stream), schemaErrorFormatter: queryRefusal };
  const hooks = { preValidation: admitToken, preHandler: admitSession };
  app.withTypeProvider<ZodTypeProvider>().get(stream.path, { websocket: true, ...checks, ...hooks }, (socket, req) => {
    const expiresAt = req.tokenExpiresAt;
    const tenant = req.streamTenant;
    if (expiresAt === null || tenant === null) {
      socket.close(CLOSE.internal, "not admitted"); // cannot happen: preValidation either admits or refuses
      return;
    }
    let closed = false;
    const io: SessionIo = {
      send: (answer) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(answer));
      },
      close: (code, reason) => {
        if (!closed) socket.close(code, reason);
        closed = true;
      },
    };
    const session = host.start(req.query, expiresAt, tenant, io, (msg, err) => req.log.warn({ err }, msg));
    socket.on("message", (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) session.onAudio(buf);
      else session.onText(buf.toString("utf8"));
    });
    socket.on("close", () => {
      closed = true;
      session.onClosed();
    });
    // ws closes with 1009 on a frame over maxPayload and emits this error; the close handler above cleans up.
    socket.on("error", (err) => req.log.info({ err: err.message }, "stream connection error"));
  });
}
