// `sori worker` has no HTTP API. With SORI_METRICS_PORT set it serves the operations endpoints alone (/healthz,
// /readyz, /metrics), so a worker host can be scraped and probed like an API host.
import Fastify, { type FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import type { Engine } from "../engine/client.js";
import type { Store } from "../storage/db.js";
import { healthRoutes } from "./health.js";

export async function startOpsServer(
  config: Config,
  store: Store,
  engines: readonly Engine[],
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(healthRoutes, { store, engines, metrics: config.metrics.enabled });
  await app.listen({ host: config.host, port: config.metrics.port ?? 0 });
  return app;
}
