// RTZR's streaming recognition over gRPC, an extension (docs/streaming.md, "gRPC"): service
// `online_decoder.OnlineDecoder`, `rpc Decode(stream DecoderRequest) returns (stream DecoderResponse)`, the service
// RTZR's Go SDK and Python tutorial call (proto/vito-stt-client.proto). Served with @grpc/grpc-js on a port of its
// own (SORI_STREAM_GRPC_PORT) over the same sessions as the WebSocket route: the token in the `authorization`
// metadata, the config as the first message (checked by the WebSocket route's query schema), audio in every later
// one, the client's half-close as EOS. A refusal or an error ends the call with a gRPC status whose details start
// with the spec's code (`H0001: ...`).
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { FastifyBaseLogger } from "fastify";
import { ApiError } from "../errors.js";
import type { StreamAnswer } from "../streaming/answer.js";
import type { StreamHost } from "../streaming/host.js";
import { StreamQuerySchema, streamQueryRefusal } from "../streaming/query.js";
import { CLOSE, type SessionIo, type StreamSession } from "../streaming/session.js";
import { bearerClient } from "./auth.js";
import type { AppContext } from "./context.js";
import { admitStream } from "./streamAdmission.js";

const PROTO = fileURLToPath(new URL("../../proto/vito-stt-client.proto", import.meta.url));

/** DecoderConfig as proto-loader reads it (keepCase, enums as names, no defaults filled in). */
interface DecoderConfig {
  sample_rate?: number;
  encoding?: string;
  use_itn?: boolean;
  use_disfluency_filter?: boolean;
  use_profanity_filter?: boolean;
}
interface DecoderRequest {
  streaming_request?: "streaming_config" | "audio_content";
  streaming_config?: DecoderConfig;
  audio_content?: Buffer;
}
type DecodeCall = grpc.ServerDuplexStream<DecoderRequest, unknown>;

/** The gRPC status for a session's close code (session.ts CLOSE), or for a refusal's spec code. */
const STATUS_BY_CLOSE: Record<number, grpc.status> = {
  [CLOSE.unsupportedData]: grpc.status.INVALID_ARGUMENT,
  [CLOSE.invalidPayload]: grpc.status.INVALID_ARGUMENT,
  [CLOSE.policy]: grpc.status.UNAUTHENTICATED,
  [CLOSE.tooBig]: grpc.status.RESOURCE_EXHAUSTED,
  [CLOSE.internal]: grpc.status.INTERNAL,
  [CLOSE.idle]: grpc.status.DEADLINE_EXCEEDED,
  [CLOSE.maxLength]: grpc.status.OUT_OF_RANGE,
  [CLOSE.quota]: grpc.status.RESOURCE_EXHAUSTED,
};
const STATUS_BY_CODE: Record<string, grpc.status> = {
  H0001: grpc.status.INVALID_ARGUMENT,
  H0002: grpc.status.UNAUTHENTICATED,
  A0001: grpc.status.RESOURCE_EXHAUSTED,
  A0002: grpc.status.RESOURCE_EXHAUSTED,
};

export async function startGrpcStreaming(
  ctx: AppContext,
  host: StreamHost,
  log: FastifyBaseLogger,
): Promise<{ close(): Promise<void> }> {
  const limits = ctx.config.stream;
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, enums: String, defaults: false, oneofs: true });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    online_decoder: { OnlineDecoder: { service: grpc.ServiceDefinition } };
  };
  const server = new grpc.Server({
    "grpc.max_receive_message_length": limits.maxFrameBytes + 1024, // one audio message, as a WebSocket frame
    "grpc.max_send_message_length": 1024 * 1024,
  });
  server.addService(pkg.online_decoder.OnlineDecoder.service, {
    Decode: (call: DecodeCall) => decode(call, ctx, host, log),
  });
  const credentials = limits.grpcTls
    ? grpc.ServerCredentials.createSsl(
        null,
        [{ cert_chain: fs.readFileSync(limits.grpcTls.cert), private_key: fs.readFileSync(limits.grpcTls.key) }],
        false,
      )
    : grpc.ServerCredentials.createInsecure();
  const address = `${ctx.config.host.includes(":") ? `[${ctx.config.host}]` : ctx.config.host}:${limits.grpcPort}`;
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve(port))),
  );
  log.info({ address, tls: limits.grpcTls !== null }, "gRPC streaming service listening");
  return {
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** One Decode call: admitted, then a session fed until the client half-closes or the session ends. */
function decode(call: DecodeCall, ctx: AppContext, host: StreamHost, log: FastifyBaseLogger): void {
  let session: StreamSession | null = null;
  let over = false;
  let failure: { code: string; msg: string } | null = null;
  let starting: Promise<void> | null = null;
  const refuse = (status: grpc.status, code: string, msg: string): void => {
    if (over) return;
    over = true;
    call.emit("error", { code: status, details: `${code}: ${msg}` });
    void starting?.then(() => session?.onClosed()); // a session still open (a second config) frees its place now
  };
  const refuseApi = (err: unknown): void => {
    const e = err instanceof ApiError ? err : new ApiError("E500", "internal error");
    if (e.code === "E500") log.error({ err }, "gRPC streaming: unexpected error");
    refuse(STATUS_BY_CODE[e.code] ?? grpc.status.INTERNAL, e.code, e.message);
  };
  // Admitted in the WebSocket route's order: the token, then (with the first message) the config, the open sessions
  // and the quota (streamAdmission.ts).
  const admitted = bearerClient(ctx, call.metadata.get("authorization")[0]);
  admitted.catch(refuseApi);
  const noConfig = setTimeout(
    () => refuse(grpc.status.DEADLINE_EXCEEDED, "H0001", `no streaming_config for ${ctx.config.stream.idleS} s`),
    ctx.config.stream.idleS * 1000,
  );
  const io: SessionIo = {
    send: (answer) => {
      if ("error" in answer) failure = answer.error;
      else if (!over) call.write(toResponse(answer));
    },
    close: (code, reason) => {
      if (code === CLOSE.normal && !failure) {
        if (!over) call.end();
        over = true;
        return;
      }
      refuse(STATUS_BY_CLOSE[code] ?? grpc.status.INTERNAL, failure?.code ?? "E500", failure?.msg ?? reason);
    },
  };

  async function start(config: DecoderConfig): Promise<void> {
    const { client, expiresAt } = await admitted;
    const parsed = StreamQuerySchema.safeParse(asQuery(config));
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      throw new ApiError("H0001", streamQueryRefusal(issue?.path ?? [], issue?.message ?? "invalid"));
    }
    const tenant = await admitStream(ctx, host, client);
    if (over) return host.release(tenant); // the client left while it was admitted
    session = host.start(parsed.data, expiresAt, tenant, io, (msg, err) => log.warn({ err }, msg));
  }

  call.on("data", (req: DecoderRequest) => {
    if (over) return;
    if (req.streaming_request === "streaming_config" && req.streaming_config) {
      if (starting) return refuse(grpc.status.INVALID_ARGUMENT, "H0001", "streaming_config may be sent only once");
      clearTimeout(noConfig);
      starting = start(req.streaming_config).catch(refuseApi);
    } else if (!starting) {
      refuse(grpc.status.INVALID_ARGUMENT, "H0001", "the first message must be streaming_config");
    } else if (req.audio_content?.length) {
      const audio = req.audio_content;
      void starting.then(() => session?.onAudio(audio));
    }
  });
  call.on("end", () => {
    clearTimeout(noConfig);
    if (!starting) return refuse(grpc.status.INVALID_ARGUMENT, "H0001", "the stream ended before streaming_config");
    void starting.then(() => session?.onText("EOS"));
  });
  call.on("cancelled", () => {
    clearTimeout(noConfig);
    over = true;
    void starting?.then(() => session?.onClosed());
  });
  call.on("error", () => clearTimeout(noConfig));
}

/** The config message as the WebSocket route's query string, so one schema checks both (unset fields: defaults). */
function asQuery(c: DecoderConfig): Record<string, string> {
  const q: Record<string, string> = { sample_rate: String(c.sample_rate ?? 0) };
  if (c.encoding && c.encoding !== "ENCODING_UNSPECIFIED") q.encoding = c.encoding;
  for (const key of ["use_itn", "use_disfluency_filter", "use_profanity_filter"] as const) {
    const v = c[key];
    if (typeof v === "boolean") q[key] = String(v);
  }
  return q;
}

function toResponse(a: StreamAnswer): object {
  return {
    error: false,
    results: [{ alternatives: a.alternatives, is_final: a.final, duration: a.duration, start_at: a.start_at }],
  };
}
