// What one host's streaming sessions share, whatever their transport (the WebSocket route, src/api/streaming.ts;
// the gRPC service, src/api/streamingGrpc.ts): the stream engines, the host's bound on open sessions, the ledger of
// sessions in the shared store (each client's bound across hosts, its streamed audio for the quota), and the start
// of a session with its metrics.
import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import type { Config } from "../config.js";
import { streamEngines } from "../engine/layout.js";
import type { ModelRegistry } from "../engine/models.js";
import { recordStreamSession } from "../metrics/index.js";
import { STREAM_HEARTBEAT_MS } from "../storage/streamSessions.js";
import { StreamEngines } from "./pool.js";
import type { StreamQuery } from "./query.js";
import { CLOSE, type SessionIo, StreamSession } from "./session.js";

/** An admitted session: its id (claimed in the ledger), its client, and the audio seconds the client's usage quota
 * has left (Infinity without one). */
export interface StreamTenant {
  sessionId: string;
  clientId: string;
  quotaLeftS: number;
}

/** The sessions of every host, in the shared store (src/storage/streamSessions.ts). */
export interface StreamLedger {
  /** Records a session of a client that may have `max` open; false when that would be one too many. */
  claim(sessionId: string, clientId: string, max: number): Promise<boolean>;
  /** This host's open sessions are alive (every STREAM_HEARTBEAT_MS). */
  touch(sessionIds: string[]): Promise<void>;
  end(sessionId: string, clientId: string, audioS: number): Promise<void>;
}

export class StreamHost {
  private open = 0;
  /** Sessions started on this host and not yet ended: the heartbeat renews them in the ledger. */
  private readonly running = new Set<string>();
  private readonly engines: StreamEngines;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly limits: Config["stream"],
    python: string,
    private readonly models: ModelRegistry,
    onLog: (line: string) => void,
    private readonly ledger: StreamLedger,
  ) {
    const engines = limits.engines ?? streamEngines(models, availableParallelism(), limits.sessions);
    this.engines = new StreamEngines(engines, python, limits.interimShare, onLog);
    this.heartbeat = setInterval(() => {
      this.ledger.touch([...this.running]).catch((err) => onLog(`stream sessions not renewed: ${err}`));
    }, STREAM_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Why a new session is refused (the transport answers A0002), or null while the host takes one more. */
  get refusal(): string | null {
    return this.open >= this.limits.sessions
      ? `this server runs at most ${this.limits.sessions} streaming sessions at once; try again later`
      : null;
  }

  /** Claims a place for a new session of a client that may have `max` open (on every host together): the tenant,
   * or null when the client has them all open. A claimed session that never starts goes stale in the ledger. */
  async claim(clientId: string, max: number, quotaLeftS: number): Promise<StreamTenant | null> {
    const sessionId = randomBytes(12).toString("base64url");
    if (!(await this.ledger.claim(sessionId, clientId, max))) return null;
    return { sessionId, clientId, quotaLeftS };
  }

  /** Frees a claimed place whose session will not start (the client left during admission). */
  release(tenant: StreamTenant): void {
    this.ledger.end(tenant.sessionId, tenant.clientId, 0).catch(() => undefined); // else it goes stale
  }

  /** Opens a claimed session on the least busy engine; `io` is the transport's. */
  start(
    query: StreamQuery,
    tokenExpiresAt: number,
    tenant: StreamTenant,
    io: SessionIo,
    log: (msg: string, err?: unknown) => void,
  ) {
    this.open++;
    this.running.add(tenant.sessionId);
    recordStreamSession(1);
    const slot = this.engines.acquire();
    return new StreamSession(tenant.sessionId, query, {
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
        this.running.delete(tenant.sessionId);
        this.ledger
          .end(tenant.sessionId, tenant.clientId, audioS)
          .catch((err) => log("stream session's end not recorded", err));
        slot.release();
        recordStreamSession(-1, code === CLOSE.normal ? "completed" : String(code));
      },
      log,
    });
  }

  stop(): Promise<void> {
    clearInterval(this.heartbeat);
    return this.engines.stop();
  }
}
