// API clients (tenants). Secrets never reach this module in clear: callers pass the KDF hash.
import type { Store } from "./db.js";
import type { ClientsTable } from "./schema.js";

export type ClientRow = ClientsTable;
export type NewClient = Omit<ClientsTable, "disabled" | "created_at">;

export async function insertClient(store: Store, c: NewClient, now = Date.now()): Promise<void> {
  await store.db
    .insertInto("clients")
    .values({ ...c, disabled: 0, created_at: now })
    .execute();
}

export async function getClient(store: Store, id: string): Promise<ClientRow | undefined> {
  return store.db.selectFrom("clients").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listClients(store: Store): Promise<ClientRow[]> {
  return store.db.selectFrom("clients").selectAll().orderBy("created_at").execute();
}

export type ClientUpdate = Partial<
  Pick<ClientsTable, "name" | "tier" | "max_concurrent" | "quota_s" | "read_rps" | "disabled">
>;

export async function updateClient(store: Store, id: string, patch: ClientUpdate): Promise<boolean> {
  if (Object.keys(patch).length === 0) return (await getClient(store, id)) !== undefined;
  const r = await store.db.updateTable("clients").set(patch).where("id", "=", id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
