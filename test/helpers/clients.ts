// A client row for tests that work on the store directly (no API, so no real secret: the hash is never checked).
import { insertClient, type NewClient } from "../../src/storage/clients.js";
import type { Store } from "../../src/storage/db.js";

export function insertTestClient(
  store: Store,
  id: string,
  tier: NewClient["tier"] = "standard",
  now?: number,
): Promise<void> {
  const row: NewClient = {
    id,
    name: id,
    secret_hash: "scrypt$x",
    tier,
    max_concurrent: null,
    quota_s: null,
    read_rps: null,
  };
  return insertClient(store, row, now);
}
