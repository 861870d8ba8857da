// Admission of a streaming session, shared by the WebSocket route and the gRPC service, after the token and the
// query: 429 A0002 when the host or the client has as many sessions open as it may (a client's bound is its
// `max_concurrent`, counted apart from its jobs), 429 A0001 when its audio usage quota is used up. The quota's
// remainder goes with the session, which closes 4002 A0001 once it has received that much audio.

import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import { audioSecondsSince } from "../storage/jobs.js";
import type { StreamHost, StreamTenant } from "../streaming/host.js";
import type { AppContext } from "./context.js";

export async function admitStream(ctx: AppContext, host: StreamHost, client: ClientRow): Promise<StreamTenant> {
  const { config, store } = ctx;
  const full = host.refusal;
  if (full) throw new ApiError("A0002", full);
  const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
  if (host.openFor(client.id) >= maxConcurrent) {
    throw new ApiError("A0002", `at most ${maxConcurrent} streaming sessions of a client may be open at once`);
  }
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  if (quotaS <= 0) return { clientId: client.id, quotaLeftS: Number.POSITIVE_INFINITY };
  const used = await audioSecondsSince(store, client.id, Date.now() - config.quotaWindowS * 1000);
  if (used >= quotaS) {
    throw new ApiError("A0001", `audio usage quota of ${quotaS} s per ${config.quotaWindowS} s is used up`);
  }
  return { clientId: client.id, quotaLeftS: quotaS - used };
}
