// Known speakers in the store (migration 009, src/storage/speakers.ts) on both backends: a speaker is its client's
// alone, a new voiceprint replaces the old, and a delete removes the row, voiceprint and all.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { checkKnownSpeakers, VOICEPRINT_MODEL } from "../../src/speakers/index.js";
import { openStore, type Store } from "../../src/storage/db.js";
import {
  countSpeakers,
  deleteSpeaker,
  getSpeaker,
  insertSpeaker,
  listSpeakers,
  updateVoiceprint,
} from "../../src/storage/speakers.js";
import { insertTestClient } from "../helpers/clients.js";
import { createPgDatabase, type PgDatabase, pgUnavailable } from "../helpers/pgDatabase.js";

const pgSkip = (await pgUnavailable()) ?? false;
const T = 1_700_000_000_000;
const print = (x: number) => ({
  model: "m1",
  embedding: [x, Math.sqrt(1 - x * x)],
  embeddingPhone: x > 0.5 ? [Math.sqrt(1 - x * x), x] : null,
  speechS: 12.5,
});

for (const [label, skip] of [
  ["SQLite", false],
  ["PostgreSQL", pgSkip],
] as const) {
  describe(`known speakers on ${label}`, { skip }, () => {
    let store: Store;
    let pg: PgDatabase | undefined;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-speakers-"));

    before(async () => {
      pg = label === "PostgreSQL" ? await createPgDatabase("sori_speakers") : undefined;
      store = await openStore({ databaseUrl: pg?.url, dataDir: path.join(dir, "data") });
      for (const c of ["a", "b"]) await insertTestClient(store, c);
    });
    after(async () => {
      await store?.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("keeps each client's speakers apart", async () => {
      await insertSpeaker(store, "a", { id: "s1", name: "Kim", ...print(0.6) }, T);
      await insertSpeaker(store, "a", { id: "s2", name: "Lee", ...print(0.8) }, T + 1);
      await insertSpeaker(store, "b", { id: "s3", name: "Park", ...print(0.1) }, T);
      assert.deepEqual(
        (await listSpeakers(store, "a")).map((s) => s.id),
        ["s1", "s2"],
      );
      assert.deepEqual(
        (await listSpeakers(store, "a", ["s2", "s3"])).map((s) => s.id),
        ["s2"],
      );
      assert.equal(await getSpeaker(store, "b", "s1"), undefined);
      assert.equal(await countSpeakers(store, "a"), 2);
      const s1 = await getSpeaker(store, "a", "s1");
      assert.deepEqual(s1?.embedding, print(0.6).embedding);
      assert.deepEqual(s1?.embeddingPhone, print(0.6).embeddingPhone);
      assert.equal((await getSpeaker(store, "b", "s3"))?.embeddingPhone, null);
      assert.equal(s1?.speechS, 12.5);
      assert.equal(s1?.model, "m1");
    });

    it("replaces a voiceprint only for its own client", async () => {
      assert.equal(await updateVoiceprint(store, "b", "s1", print(0.2), T + 5), false);
      assert.equal(await updateVoiceprint(store, "a", "s1", { ...print(0.2), speechS: 40 }, T + 5), true);
      const s1 = await getSpeaker(store, "a", "s1");
      assert.equal(s1?.speechS, 40);
      assert.equal(s1?.updatedAt, T + 5);
      assert.equal(s1?.embeddingPhone, null);
    });

    it("a job may name only the client's speakers, and only voiceprints of this server's model", async () => {
      await assert.rejects(checkKnownSpeakers(store, "b", ["s1"]), /no speaker with id s1/);
      // s1 and s2 were enrolled with model "m1", not the engine's: refused, named or asked for as "all".
      await assert.rejects(checkKnownSpeakers(store, "a", ["s2"]), /voiceprint model m1.*enroll it again/);
      await assert.rejects(checkKnownSpeakers(store, "a", []), /enroll it again/);
      await insertSpeaker(store, "b", { id: "s4", name: "Cho", ...print(0.3), model: VOICEPRINT_MODEL }, T);
      await checkKnownSpeakers(store, "b", ["s4"]);
      await assert.rejects(checkKnownSpeakers(store, "b", []), /s3/);
      await deleteSpeaker(store, "b", "s4");
    });

    it("a delete removes the voiceprint from the store, and only the owner's delete counts", async () => {
      assert.equal(await deleteSpeaker(store, "b", "s1"), false);
      assert.equal(await deleteSpeaker(store, "a", "s1"), true);
      assert.equal(await deleteSpeaker(store, "a", "s1"), false);
      const rows = await store.db.selectFrom("speakers").select(["id", "embedding"]).execute();
      assert.deepEqual(rows.map((r) => r.id).sort(), ["s2", "s3"]);
    });
  });
}
