// What one host's streaming sessions share, whatever their transport (the WebSocket route, src/api/streaming.ts;
// the gRPC service, src/api/streamingGrpc.ts): the stream engines, the bound on open sessions, and the start of a
// session with its metrics.
import { randomBytes } from "node:crypto";
import type { Config } from "../config.js";
import type { ModelRegistry } from "../engine/models.js";
import { recordStreamSession } from "../metrics/index.js";
import { StreamEngines } from "./pool.js";
import type { StreamQuery } from "./query.js";
import { CLOSE, type SessionIo, StreamSession } from "./session.js";

export class StreamHost {
  private open = 0;
  private readonly engines: StreamEngines;

  constructor(
    private readonly limits: Config["stream"],
    python: string,
    private readonly models: ModelRegistry,
    onLog: (line: string) => void,
  ) {
    this.engines = new StreamEngines(limits.engines, python, limits.interimShare, onLog);
  }

  /** Why a new session is refused (the transport answers A0002), or null while the host takes one more. */
  get refusal(): string | null {
    return this.open >= this.limits.sessions
      ? `this server runs at most ${this.limits.sessions} streaming sessions at once; try again later`
      : null;
  }

  /** Opens a session on the least busy engine; `io` is the transport's. */
  start(query: StreamQuery, tokenExpiresAt: number, io: SessionIo, log: (msg: string, err?: unknown) => void) {
    this.open++;
    recordStreamSession(1);
    const slot = this.engines.acquire();
    return new StreamSession(randomBytes(12).toString("base64url"), query, {
      engine: slot.engine,
      steps: slot.steps,
      models: this.models,
      limits: { maxS: this.limits.maxS, idleS: this.limits.idleS, interimMs: this.limits.interimMs },
      tokenExpiresAt,
      io,
      onEnd: (code) => {
        this.open--;
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
