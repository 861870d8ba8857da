// POST /v1/authenticate and the bearer-token check for every other /v1 route.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { dummySecretHash, verifySecret } from "../auth/secrets.js";
import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import { getClient } from "../storage/clients.js";
import type { AppContext } from "./context.js";
import { ErrorBody, Int, type Route, route } from "./route.js";

const CREDENTIALS_REFUSAL = "client_id and client_secret are required (form fields)";
const Credentials = z
  .object(
    {
      client_id: z.string({ error: CREDENTIALS_REFUSAL }).min(1, CREDENTIALS_REFUSAL),
      client_secret: z.string({ error: CREDENTIALS_REFUSAL }).min(1, CREDENTIALS_REFUSAL),
    },
    { error: CREDENTIALS_REFUSAL },
  )
  .meta({ id: "Credentials" });
const Token = z.object({ access_token: z.string(), expire_at: Int.meta({ description: "epoch seconds" }) });

const authenticate = {
  method: "post",
  path: "/v1/authenticate",
  summary: "Issue an access token",
  body: Credentials,
  bodyTypes: ["application/x-www-form-urlencoded", "multipart/form-data"],
  responses: { 200: { description: "A token", content: { "application/json": Token } } },
  errors: ["H0001", "H0002", "H0005", "A0003"],
  errorBody: ErrorBody,
} satisfies Route;

export const authDeclarations: Route[] = [authenticate];

export async function authRoutes(app: FastifyInstance): Promise<void> {
  const { config, store, tokens, limiter } = app.sori;

  // Before the body is checked: throttled by address (this is where secrets are guessed); a multipart form's fields
  // become the body, which the schema then checks as it does a url-encoded form's.
  async function beforeChecks(req: FastifyRequest): Promise<void> {
    if (!(await limiter.take(`auth:${req.ip}`, config.authRps, config.authBurst))) {
      throw new ApiError("A0003", "too many authentication attempts; slow down");
    }
    if (req.isMultipart()) req.body = await multipartFields(req);
  }

  route(
    app,
    authenticate,
    async (req) => {
      const { client_id: clientId, client_secret: secret } = req.body;
      const client = clientId.length <= 64 ? await getClient(store, clientId) : undefined;
      // Verify against a dummy hash for unknown ids so both failures take the same time.
      const ok = await verifySecret(secret.slice(0, 256), client?.secret_hash ?? (await dummySecretHash()));
      if (!client || !ok || client.disabled) throw new ApiError("H0002", "invalid client credentials");
      return tokens.issue(client.id);
    },
    { preValidation: beforeChecks },
  );
}

/** Form fields of a multipart body (`curl -F`), which clients send as often as url-encoded forms. */
async function multipartFields(req: FastifyRequest): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  try {
    for await (const part of req.parts({ limits: { fileSize: 0, fieldSize: 4096 } })) {
      if (part.type === "file") part.file.resume();
      else fields[part.fieldname] = part.value;
    }
  } catch (err) {
    // Nothing is stored here, so whatever fails is the body's fault (no boundary, truncated, too many parts):
    // the parser's plain Errors would otherwise be 500s (found by schemathesis, docs/security.md).
    if (err instanceof ApiError || (err as { code?: string }).code?.startsWith("FST_")) throw err; // the usual mapping
    throw new ApiError("H0001", `malformed multipart body: ${(err as Error).message}`);
  }
  return fields;
}

/** onRequest hook for protected routes: a valid, unexpired token of an existing, enabled client, or 401 H0002. */
export async function requireClient(this: FastifyInstance, req: FastifyRequest): Promise<void> {
  req.client = (await bearerClient(this.sori, req.headers.authorization)).client;
}

/** The client an `Authorization: Bearer <token>` value names (scheme in any case), and when its token expires
 * (epoch ms); H0002 for anything else. Also the streaming transports' check (WebSocket headers, gRPC metadata). */
export async function bearerClient(
  ctx: Pick<AppContext, "tokens" | "store">,
  header: unknown,
): Promise<{ client: ClientRow; expiresAt: number }> {
  const match = typeof header === "string" ? /^Bearer ([A-Za-z0-9._~+/=-]{1,4096})$/i.exec(header.trim()) : null;
  if (!match) throw new ApiError("H0002", "missing or malformed Authorization header (Bearer <token>)");
  const claims = await ctx.tokens.claims(match[1]!);
  const client = claims ? await getClient(ctx.store, claims.clientId) : undefined;
  if (!claims || !client || client.disabled) throw new ApiError("H0002", "invalid or expired token");
  return { client, expiresAt: claims.exp * 1000 };
}
