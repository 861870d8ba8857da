// What the route plugins share: decorated onto the Fastify instance once at start-up.

import type { TokenIssuer } from "../auth/tokens.js";
import type { Config } from "../config.js";
import type { Engine } from "../engine/client.js";
import type { BlobStore } from "../storage/blobs/index.js";
import type { ClientRow } from "../storage/clients.js";
import type { Store } from "../storage/db.js";
import type { Limiter } from "./rateLimit.js";

export interface AppContext {
  config: Config;
  store: Store;
  blobs: BlobStore;
  tokens: TokenIssuer;
  limiter: Limiter;
  /** Called after a job is queued, so in-process workers can start at once. */
  onJobQueued: () => void;
  /** The engines of this process's workers, for /readyz; absent or empty on an API-only host. */
  engines?: readonly Engine[];
}

declare module "fastify" {
  interface FastifyInstance {
    sori: AppContext;
  }
  interface FastifyRequest {
    client: ClientRow | null;
  }
}
