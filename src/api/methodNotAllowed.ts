// Requests that match no route: 405 with `Allow` when the path exists under other methods (HTTP's rule, RFC 9110
// 15.5.6), else 404; both in the spec's `{"code","msg"}` shape with code H0004 (docs/errors.md). Answered in
// onRequest, before Fastify would parse a body it has no route for (a QUERY without a content type was a 400).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { recordApiError } from "../metrics/index.js";

interface RoutedPath {
  pattern: RegExp;
  methods: Set<string>;
}

/** A Fastify path as a regular expression over the request path: `:name` one segment, `*` the rest, `::` a colon. */
function pathPattern(url: string): RegExp {
  const parts = url.split(/(::|:[A-Za-z0-9_]+|\*)/);
  const source = parts
    .map((p) =>
      p === "::" ? ":" : p === "*" ? ".*" : p.startsWith(":") ? "[^/]+" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("");
  return new RegExp(`^${source}$`);
}

/** Collects every route as it is added; call before any route is registered. */
export function methodNotAllowed(app: FastifyInstance): void {
  const paths = new Map<string, RoutedPath>();
  app.addHook("onRoute", (route) => {
    const entry = paths.get(route.url) ?? { pattern: pathPattern(route.url), methods: new Set<string>() };
    for (const m of [route.method].flat()) entry.methods.add(m);
    if (entry.methods.has("GET")) entry.methods.add("HEAD"); // Fastify serves HEAD for every GET
    paths.set(route.url, entry);
  });

  const allowed = (url: string): string[] => {
    const path = url.split("?")[0] ?? "";
    const methods = new Set<string>();
    for (const p of paths.values()) if (p.pattern.test(path)) for (const m of p.methods) methods.add(m);
    return [...methods].sort();
  };

  app.addHook("onRequest", async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.is404) return;
    const methods = allowed(req.url);
    recordApiError("H0004");
    if (methods.length === 0) return reply.status(404).send(new ApiError("H0004", "no such endpoint").toBody());
    return reply
      .status(405)
      .header("allow", methods.join(", "))
      .send(new ApiError("H0004", `method ${req.method} not allowed here; allowed: ${methods.join(", ")}`).toBody());
  });
}
