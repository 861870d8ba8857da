// GET /v1/callbacks/secret: the caller's callback signing secret (docs/extras.md), to verify X-Sori-Signature.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { callbackSecret, loadCallbackKey } from "../callbacks/sign.js";
import { requireClient } from "./auth.js";
import { ErrorBody, type RouteDoc } from "./routeDoc.js";

const Secret = z.object({ secret: z.string() });

export const callbackSecretDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/v1/callbacks/secret",
    summary: "The caller's callback signing secret (extra)",
    auth: true,
    responses: { 200: { description: "The secret", content: { "application/json": Secret } } },
    errors: ["H0002"],
    errorBody: ErrorBody,
  },
];

export async function callbackSecretRoutes(app: FastifyInstance): Promise<void> {
  const key = loadCallbackKey(app.sori.config.dataDir);
  app.addHook("onRequest", requireClient);
  app.get(
    "/v1/callbacks/secret",
    async (req) => ({ secret: callbackSecret(key, req.client!) }) satisfies z.infer<typeof Secret>,
  );
}
