// GET /v1/callbacks/secret: the caller's callback signing secret (docs/extras.md), to verify X-Sori-Signature.
import type { FastifyInstance } from "fastify";
import { callbackSecret, loadCallbackKey } from "../callbacks/sign.js";
import { requireClient } from "./auth.js";

export async function callbackSecretRoutes(app: FastifyInstance): Promise<void> {
  const key = loadCallbackKey(app.sori.config.dataDir);
  app.addHook("onRequest", requireClient);
  app.get("/v1/callbacks/secret", async (req) => ({ secret: callbackSecret(key, req.client!) }));
}
