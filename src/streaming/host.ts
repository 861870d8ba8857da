// What one host's streaming sessions share, whatever their transport (the WebSocket route, src/api/streaming.ts;
// the gRPC service, src/api/streamingGrpc.ts): the stream engines, the bounds on open sessions (the host's, each
// client's), and the start of a session with its metrics and, at its end, its audio recorded for the usage quota.
import { randomBytes } from "node:crypto";
import type { Config } from "../config.js";
import type { ModelRegistry } from "../engine/models.js";
import { recordStreamSession } from "../metrics/index.js";
import { StreamEngines } from "./pool.js";
import type { StreamQuery } from "./query.js";
import { CLOSE, type SessionIo, StreamSession } from "./session.js";

/** Who opens a session: the client, and the audio seconds its usage quota has left (Infinity without one). */
export interface StreamTenant {
  clientId: string;
  quotaLeftS: number;
}

export class StreamHost {
  private open = 0;
  private readonly openByClient = new Map<string, number>();
  private readonly engines: StreamEngines;

  constructor(
    private readonly limits: Config["stream"],
    python: string,
    private readonly models: ModelRegistry,
    onLog: (line: string) => void,
    private readonly recordUsage: (clientId: string, audioS: number) => Promise<void>,
  ) {
    this.engines = new StreamEngines(limits.engines, python, limits.interimShare, onLog);
  }

  /** Why a new session is refused (the transport answers A0002), or null while the host takes one more. */
  get refusal(): string | null {
    return this.open >= this.limits.sessions
      ? `this server runs at most ${this.limits.sessions} streaming sessions at once; try again later`
      : null;
  }

  /** Sessions the client has open on this host. */
  openFor(clientId: string): number {
    return this.openByClient.get(clientId) ?? 0;
  }

  /** Opens a session on the least busy engine; `io` is the transport's. */
  start(
    query: StreamQuery,
    tokenExpiresAt: number,
    tenant: StreamTenant,
    io: SessionIo,
    log: (msg: string, err?: unknown) => void,
  ) {
    this.open++;
    this.openByClient.set(tenant.clientId, this.openFor(tenant.clientId) + 1);
    recordStreamSession(1);
    const slot = this.engines.acquire();
    return new StreamSession(randomBytes(12).toString("base64url"), query, {
      engine: slot.engine,
      steps: slot.steps,
      models: this.models,
      limits: {
        maxS: this.limits.maxS,
        idleS: this.limits.idleS,
        interimMs: this.limits.interimMs,
        quotaLeftS: tenant.quotaLeftS,
      },
      tokenExpiresAt,
      io,
      onEnd: (code, audioS) => {
        this.open--;
        const left = this.openFor(tenant.clientId) - 1;
        if (left > 0) this.openByClient.set(tenant.clientId, left);
        else this.openByClient.delete(tenant.clientId);
        this.recordUsage(tenant.clientId, audioS).catch((err) => log("stream usage not recorded", err));
        slot.release();
        recordStreamSession(-1, code === CLOSE.normal ? "completed" : String(code));
      },
      log,
    });
  }

  stop(): Promise<void> {
    return this.engines.stop();
  }
}
