// Operations endpoints, outside the spec and without a token: /healthz (the process answers), /readyz (it can do
// its work: the store answers and, where this process has workers, their engines are up) and /metrics
// (Prometheus text; docs/observability.md). None of them shows a client id, a job or a secret.
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import { z } from "zod";
import type { Engine } from "../engine/client.js";
import type { Store } from "../storage/db.js";
import { registry } from "./index.js";
import { refreshQueueDepth } from "./queue.js";

export interface HealthOptions {
  store: Store;
  /** The engines of this process's workers; empty for an API-only host. */
  engines: readonly Engine[];
  /** SORI_METRICS: false leaves /metrics unrouted (404 H0004). */
  metrics: boolean;
}

// The answers' shapes, for the OpenAPI document (src/api/openapiDocument.ts).
export const Liveness = z.object({ status: z.literal("ok") });
export const Readiness = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    not_ready: z.array(z.string()).optional(),
    checks: z.record(z.string(), z.string()),
  })
  .meta({ id: "Readiness" });
type Readiness = z.infer<typeof Readiness>;

// A store that does not answer within this is as good as down for a load balancer's probe.
const STORE_TIMEOUT_MS = 2000;

export async function healthRoutes(app: FastifyInstance, opts: HealthOptions): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok" }) satisfies z.infer<typeof Liveness>);

  app.get("/readyz", async (_req, reply) => {
    const checks: Record<string, string> = { store: await storeCheck(opts.store) };
    if (opts.engines.length) checks.engine = engineCheck(opts.engines);
    const notReady = Object.entries(checks)
      .filter(([k, v]) => v !== (k === "store" ? "ok" : "loaded"))
      .map(([k]) => k);
    if (notReady.length)
      return reply.status(503).send({ status: "not_ready", not_ready: notReady, checks } satisfies Readiness);
    return { status: "ready", checks } satisfies Readiness;
  });

  if (opts.metrics) {
    app.get("/metrics", async (req, reply) => {
      // A store that is down must not cost the process metrics: the queue gauge keeps its last value.
      await refreshQueueDepth(opts.store).catch((err) =>
        req.log.warn({ err: (err as Error).message }, "queue depth unavailable"),
      );
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  }
}

async function storeCheck(store: Store): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((r) => (timer = setTimeout(() => r("timeout"), STORE_TIMEOUT_MS)));
  const query = sql`select 1 as ok`.execute(store.db).then(
    () => "ok",
    () => "unreachable",
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// Engines start at a worker's first job. So that an idle host still becomes ready, a probe that finds an engine not
// running starts it (a `ping`) and reports `starting` until it has announced ready.
const warming = new WeakMap<Engine, "starting" | "failed">();

function engineCheck(engines: readonly Engine[]): string {
  const states = engines.map((e) => {
    if (warming.get(e) === "starting") return "starting";
    if (e.pid !== undefined) return "loaded";
    const failedBefore = warming.get(e) === "failed";
    warming.set(e, "starting");
    e.ping().then(
      () => warming.delete(e),
      () => warming.set(e, "failed"),
    );
    return failedBefore ? "failed" : "starting";
  });
  return states.find((s) => s === "failed") ?? states.find((s) => s === "starting") ?? "loaded";
}
