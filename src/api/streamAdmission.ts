// Admission of a streaming session, shared by the WebSocket route and the gRPC service, after the token and the
// query: 429 A0002 when this host has all its sessions open, 429 A0001 when the client's audio usage quota is used
// up, 429 A0002 when the client has its `max_concurrent` sessions open on the hosts that share the store (counted
// apart from its jobs). The quota's remainder goes with the session, which closes 4002 A0001 once it has received
// that much audio.
import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import type { StreamHost, StreamTenant } from "../streaming/host.js";
import { quotaLeft } from "./admission.js";
import type { AppContext } from "./context.js";

export async function admitStream(ctx: AppContext, host: StreamHost, client: ClientRow): Promise<StreamTenant> {
  const { config } = ctx;
  const full = host.refusal;
  if (full) throw new ApiError("A0002", full);
  const quotaLeftS = await quotaLeft(ctx, client);
  const maxConcurrent = client.max_concurrent ?? config.defaults.maxConcurrent;
  const tenant = await host.claim(client.id, maxConcurrent, quotaLeftS);
  if (!tenant) {
    throw new ApiError("A0002", `at most ${maxConcurrent} streaming sessions of a client may be open at once`);
  }
  return tenant;
}
