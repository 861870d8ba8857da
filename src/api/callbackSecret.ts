// GET /v1/callbacks/secret: the caller's callback signing secret (docs/extras.md), to verify X-Sori-Signature.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { callbackSecret, loadCallbackKey } from "../callbacks/sign.js";
import { requireClient } from "./auth.js";
import { ErrorBody, type Route, route } from "./route.js";

const Secret = z.object({ secret: z.string() });

const secret = {
  method: "get",
  path: "/v1/callbacks/secret",
  summary: "The caller's callback signing secret (extra)",
  auth: true,
  responses: { 200: { description: "The secret", content: { "application/json": Secret } } },
  errors: ["H0002"],
  errorBody: ErrorBody,
} satisfies Route;

export const callbackSecretDeclarations: Route[] = [secret];

export async function callbackSecretRoutes(app: FastifyInstance): Promise<void> {
  const key = loadCallbackKey(app.sori.config.dataDir);
  app.addHook("onRequest", requireClient);
  route(app, secret, async (req) => ({ secret: callbackSecret(key, req.client!) }));
}
