// Opening a session of GET /v1/transcribe:streaming as the public clients do, for tests that look at its refusals.
import WebSocket from "ws";

/** A handshake refused with HTTP: its status and the spec's `{"code","msg"}` body. */
export interface Refusal {
  status: number;
  body: { code: string; msg: string };
}

/** Opens a session at `wsUrl` (ws://host:port); resolves with the refusal when the handshake is refused. */
export function connectStream(wsUrl: string, query: string, auth: string | null): Promise<WebSocket | Refusal> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${wsUrl}/v1/transcribe:streaming?${query}`, {
      headers: auth === null ? {} : { Authorization: auth },
    });
    socket.once("open", () => resolve(socket));
    socket.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
    socket.once("error", reject);
  });
}
