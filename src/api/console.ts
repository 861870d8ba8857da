// The web console at `/` (docs/extras.md): the static files esbuild made in console/dist, read once at start.
// Without a build, `/` says how to make one. The console is a client of the public API like any other.
import fs from "node:fs";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { projectRoot } from "../config.js";
import { ErrorBody, type Route, route, Text } from "./route.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

const page = {
  method: "get",
  path: "/",
  summary: "Web console",
  responses: {
    200: { description: "The console's page", content: { "text/html": Text } },
    404: { description: "Console not built", content: { "text/plain": Text } },
  },
} satisfies Route;

const asset = {
  method: "get",
  path: "/console/:file",
  summary: "Web console assets",
  params: z.object({ file: z.string() }),
  responses: {
    200: { description: "A built asset", content: { "text/javascript": Text, "text/css": Text } },
    404: { description: "No such asset", content: { "application/json": ErrorBody } },
  },
} satisfies Route;

export const consoleDeclarations: Route[] = [page, asset];

export async function consoleRoutes(app: FastifyInstance, opts: { dir?: string } = {}): Promise<void> {
  const dir = opts.dir ?? path.join(projectRoot, "console", "dist");
  const files = new Map<string, { body: Buffer; type: string }>();
  if (fs.existsSync(dir)) {
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[path.extname(name)];
      if (type) files.set(name, { body: fs.readFileSync(path.join(dir, name)), type });
    }
  }
  const headers = {
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'self'; media-src 'self' blob:; style-src 'self'; img-src 'self' data:",
  };

  route(app, page, async (_req, reply) => {
    const index = files.get("index.html");
    if (!index)
      return reply
        .status(404)
        .type("text/plain; charset=utf-8")
        .send("The console is not built: run `make build` (or `npm run build`).\n");
    return reply.headers(headers).type(index.type).send(index.body);
  });
  route(app, asset, async (req, reply) => {
    const f = files.get(req.params.file);
    if (!f || req.params.file === "index.html") {
      reply.callNotFound();
      return reply;
    }
    return reply
      .headers({ ...headers, "cache-control": "no-cache" })
      .type(f.type)
      .send(f.body);
  });
}
