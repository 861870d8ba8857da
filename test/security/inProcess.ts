// The real HTTP app (src/api/server.ts) built in this process, for tests that need Fastify's own view of it (the
// route list) or call the parser functions beside it. Requests go through app.inject: the same router, parsers,
// hooks and error handler as a listening server. Nothing here stores uploads, so no blob store is given.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { RateLimiter } from "../../src/api/rateLimit.js";
import { buildServer } from "../../src/api/server.js";
import { loadSigningKey, tokenIssuer } from "../../src/auth/tokens.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { openStore } from "../../src/storage/db.js";

export async function inProcessApp(
  env: NodeJS.ProcessEnv = {},
): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-sec-"));
  const config = loadConfig({ SORI_DATA_DIR: dataDir, SORI_LOG_LEVEL: "silent", SORI_WORKERS: "0", ...env });
  const store = await openStore(config);
  const tokens = tokenIssuer(loadSigningKey(dataDir), config.tokenTtlS);
  const app = await buildServer(
    { config, store, blobs: undefined as never, tokens, limiter: new RateLimiter(), onJobQueued: () => {} },
    createLogger("silent"),
  );
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every (method, path) Fastify routes, from its printRoutes tree; HEAD is left out (Fastify adds it to each GET).
 * Paths use OpenAPI's `{param}` form. */
export function fastifyRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split("\n")) {
    const m = /^([\s│├└─]*)(\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const url = stack.join("").replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    for (const method of (m[3] ?? "").split(", ").filter((x) => x && x !== "HEAD")) out.push(`${method} ${url}`);
  }
  return out.sort();
}
