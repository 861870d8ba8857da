// Admission of a streaming session, shared by the WebSocket route and the gRPC service, after the token and the
// query: 429 A0002 when this host has all its sessions open, 429 A0001 when the client's audio usage quota is used
// up, 429 A0002 when the client has its `max_concurrent` sessions open on the hosts that share the store (counted
// apart from its jobs). The quota's remainder goes with the session, which closes 4002 A0001 once it has received
// that much audio.
import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import { audioSecondsSince } from "../storage/jobs.js";
import type { StreamHost, StreamTenant } from "../streaming/host.js";
import type { AppContext } from "./context.js";

export async function admitStream(ctx: AppContext, host: StreamHost, client: ClientRow): Promise<StreamTenant> {
  const { config, store } = ctx;
  const full = host.refusal;
  if (full) throw new ApiError("A0002", full);
  const quotaS = client.quota_s ?? config.defaults.quotaS;
  let quotaLeftS = Number.POSITIVE_INFINITY;
  if (quotaS > 0) {
    const used = await audioSecondsSince(store, client.id, Date.now() - config.quotaWindowS * 1000);
    if (used >= quotaS) {
      throw new ApiError("A0001", `audio usage quota of ${quotaS} s per ${config.quotaWindowS} s is used up`);
    }
    quotaLeftS = quotaS - used;
  }
  const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
  const tenant = await host.claim(client.id, maxConcurrent, quotaLeftS);
  if (!tenant) {
    throw new ApiError("A0002", `at most ${maxConcurrent} streaming sessions of a client may be open at once`);
  }
  return tenant;
}
