// Requests Node's HTTP parser refuses before Fastify sees them (headers over the 16 KB limit, a malformed request
// line, a bad chunked encoding): Fastify's default answers these in its own JSON shape, so this writes the spec's
// `{"code","msg"}` instead. It is 400 H0001 like every other request the HTTP layer rejects (docs/errors.md).
import type { Socket } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { recordApiError } from "../metrics/index.js";

export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A peer that is gone (or a socket already answered) cannot be told anything.
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const msg =
    err.code === "HPE_HEADER_OVERFLOW"
      ? "request headers too large"
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "the request was not received in time"
        : "malformed HTTP request";
  recordApiError("H0001");
  const body = JSON.stringify(new ApiError("H0001", msg).toBody());
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Fastify's own refusals before routing (a path that is not valid percent-encoding: FST_ERR_BAD_URL), which would
 * otherwise get Fastify's default body. */
export function frameworkErrors(err: Error, _req: FastifyRequest, reply: FastifyReply): void {
  recordApiError("H0001");
  void reply.status(400).send(new ApiError("H0001", `invalid request: ${err.message}`).toBody());
}
