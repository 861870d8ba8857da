// Streaming sessions in the store (migration 008, src/storage/streamSessions.ts) on both backends: a client's bound
// counts the sessions of every host, a crashed host's sessions stop counting once stale, and ended sessions' audio
// counts against the usage quota.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { openStore, type Store } from "../../src/storage/db.js";
import { audioSecondsSince } from "../../src/storage/jobs.js";
import {
  claimStreamSession,
  endStreamSession,
  STREAM_STALE_MS,
  touchStreamSessions,
} from "../../src/storage/streamSessions.js";
import { insertTestClient } from "../helpers/clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const pgSkip = (await pgUnavailable()) ?? false;
const T = 1_700_000_000_000;

for (const [label, skip] of [
  ["SQLite", false],
  ["PostgreSQL", pgSkip],
] as const) {
  describe(`streaming sessions on ${label}`, { skip }, () => {
    let store: Store;
    let pg: PgDatabase | undefined;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-streams-"));

    before(async () => {
      pg = label === "PostgreSQL" ? await createPgDatabase("sori_streams") : undefined;
      store = await openStore({ databaseUrl: pg?.url, dataDir: path.join(dir, "data") });
      for (const c of ["a", "b", "q"]) await insertTestClient(store, c);
    });
    after(async () => {
      await store?.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("bounds a client's open sessions, whichever host claims them, and frees a place when one ends", async () => {
      assert.equal(await claimStreamSession(store, "s1", "a", 2, T), true); // host 1
      assert.equal(await claimStreamSession(store, "s2", "a", 2, T), true); // host 2
      assert.equal(await claimStreamSession(store, "s3", "a", 2, T), false);
      assert.equal(await claimStreamSession(store, "s4", "b", 2, T), true); // another client's are apart
      await endStreamSession(store, "s1", "a", 0);
      assert.equal(await claimStreamSession(store, "s5", "a", 2, T), true);
    });

    it("stops counting sessions no host renews (a crashed host) and drops their rows", async () => {
      assert.equal(await claimStreamSession(store, "c1", "b", 2, T), true); // b: s4 and c1 open
      await touchStreamSessions(store, ["c1"], T + STREAM_STALE_MS); // c1's host lives; s4's has gone silent
      const later = T + STREAM_STALE_MS + 1;
      assert.equal(await claimStreamSession(store, "c2", "b", 2, later), true); // s4, stale, is not counted
      assert.equal(await claimStreamSession(store, "c3", "b", 2, later), false); // c1 and c2 are
      await touchStreamSessions(store, ["c1", "c2"], later); // s4's row is dropped
      const rows = await store.db.selectFrom("stream_sessions").select("id").where("client_id", "=", "b").execute();
      assert.deepEqual(rows.map((r) => r.id).sort(), ["c1", "c2"]);
    });

    it("counts an ended session's audio against the quota", async () => {
      const since = Date.now() - 1000;
      assert.equal(await audioSecondsSince(store, "q", since), 0);
      assert.equal(await claimStreamSession(store, "q1", "q", 1), true);
      await endStreamSession(store, "q1", "q", 12.5);
      assert.equal(await audioSecondsSince(store, "q", since), 12.5);
    });
  });
}
