// Scale-out on one machine: `sori serve --no-workers` and `sori worker` as separate processes with separate data
// dirs, sharing only a fresh PostgreSQL database that also holds the audio (SORI_BLOB_STORE=postgres). The worker
// polls once a minute, so a prompt start can only come from LISTEN/NOTIFY (src/jobs/wakeup.ts).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ListMultipartUploadsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import pg from "pg";
import { LISTENER_NAME } from "../../src/jobs/wakeup.js";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { assertResembles, REFERENCES } from "../helpers/cer.js";
import { eventuallyDeepEqual } from "../helpers/eventually.js";
import {
  pgUnavailable,
  type S3Server,
  type ScaleOut,
  s3Unavailable,
  startS3,
  startScaleOut,
} from "../helpers/scaleout.js";
import { TESTDATA } from "../helpers/server.js";

const SHORT = path.join(TESTDATA, "en/whisper_jfk.flac"); // 11 s, 1.15 MB
const LONG = path.join(TESTDATA, "en/earnings22_1_4482311_3_62.wav"); // 2.86 MB
const CONFIG = { model_name: "whisper", language: "detect", language_candidates: ["en"] };
const POLL_MS = 60_000;

const skip = (await pgUnavailable()) ?? false;

describe("scale-out: API and worker processes on PostgreSQL with the PostgreSQL blob store", { skip }, () => {
  let so: ScaleOut;
  let token: string;
  let db: pg.Client;

  const q = async <T>(text: string, values: unknown[] = []): Promise<T[]> => (await db.query(text, values)).rows as T[];
  /** ms from now until the job leaves `queued` (a worker claimed it). */
  const pickupMs = async (id: string, submittedAt: number): Promise<number> => {
    for (;;) {
      const [row] = await q<{ state: string }>(
        "SELECT t.state FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' WHERE j.id = $1",
        [id],
      );
      if (row && row.state !== "queued") return Date.now() - submittedAt;
      if (Date.now() - submittedAt > 20_000) throw new Error("job not picked up within 20 s");
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const listeners = (): Promise<{ pid: number }[]> =>
    q("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [LISTENER_NAME]);

  before(async () => {
    so = await startScaleOut({ env: { SORI_BLOB_STORE: "postgres" }, workerEnv: { SORI_POLL_MS: String(POLL_MS) } });
    db = new pg.Client({ connectionString: so.db.url });
    await db.connect();
    token = await authenticate(so.api.url, so.client.client_id, so.client.client_secret);
    // The worker's listener connects right after start; wait for it, so the first submit is not a race.
    const end = Date.now() + 10_000;
    while ((await listeners()).length === 0) {
      if (Date.now() > end) throw new Error("the worker never LISTENed");
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    await db?.end();
    await so?.stop();
  });

  it("a job submitted to the API process is picked up by the worker process within ~1 s and transcribed", async () => {
    const t0 = Date.now();
    const r = await submit(so.api.url, token, SHORT, CONFIG);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = String(r.body.id);
    const ms = await pickupMs(id, t0);
    console.log(`# pickup after submit: ${ms} ms (worker SORI_POLL_MS=${POLL_MS})`);
    assert.ok(ms < 1500, `picked up after ${ms} ms`);

    // While queued or running, the audio is in PostgreSQL and nowhere on the API's disk.
    const body = await waitFinal(so.api.url, token, id);
    assert.equal(body.status, "completed", JSON.stringify(body));
    const text = body.results.utterances.map((u: { msg: string }) => u.msg).join(" ");
    assertResembles(text, REFERENCES.jfk, 0.3);

    // The audio is removed once the job is done (just after it turns final), and no spool copy stays on either host.
    await eventuallyDeepEqual(() => q("SELECT blob_key FROM blob_chunks"), []);
    for (const p of [so.api, ...so.workers]) {
      await eventuallyDeepEqual(() => fs.readdirSync(path.join(p.dataDir, "spool")), [], `${p.dataDir}/spool is empty`);
      assert.ok(
        !fs.existsSync(path.join(p.dataDir, "blobs")) || fs.readdirSync(path.join(p.dataDir, "blobs")).length === 0,
      );
    }
    assert.notEqual(so.api.dataDir, so.workers[0]!.dataDir, "no shared directory");
  });

  it("the listener reconnects after its connection is killed, and wake-ups work again", async () => {
    const [old] = await listeners();
    assert.ok(old);
    await q("SELECT pg_terminate_backend($1)", [old.pid]);
    const end = Date.now() + 10_000;
    for (;;) {
      const now = await listeners();
      if (now.length === 1 && now[0]!.pid !== old.pid) break;
      if (Date.now() > end) throw new Error("the listener did not reconnect within 10 s");
      await new Promise((r) => setTimeout(r, 50));
    }
    const t0 = Date.now();
    const r = await submit(so.api.url, token, SHORT, CONFIG);
    const id = String(r.body.id);
    const ms = await pickupMs(id, t0);
    console.log(`# pickup after the listener reconnected: ${ms} ms`);
    assert.ok(ms < 1500, `picked up after ${ms} ms`);
    assert.equal((await waitFinal(so.api.url, token, id)).status, "completed");
    assert.ok(
      so.workers[0]!.logs.some((l) => l.includes("job notification listener disconnected")),
      "the drop is logged",
    );
  });
});

describe(
  "scale-out with the S3 blob store (moto): submit-time checks and a transcription",
  { skip: skip || (s3Unavailable() ?? false) },
  () => {
    let s3: S3Server;
    let so: ScaleOut;
    let token: string;
    const objects = async (): Promise<string[]> =>
      ((await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((o) => o.Key!);

    before(async () => {
      s3 = await startS3();
      // 2 MB: SHORT fits; LONG is cut off while streaming (it is under the limit + 1 MiB that is refused unread).
      so = await startScaleOut({ env: { ...s3.env, SORI_S3_PREFIX: "sori/", SORI_MAX_FILE_BYTES: "2000000" } });
      token = await authenticate(so.api.url, so.client.client_id, so.client.client_secret);
    });
    after(async () => {
      await so?.stop();
      await s3?.stop();
    });

    it("refused uploads (too large, not audio) never reach the bucket", async () => {
      const big = await submit(so.api.url, token, LONG, CONFIG);
      assert.equal(big.status, 413);
      assert.equal(big.body.code, "H0005");
      const junk = await submit(so.api.url, token, new Blob([Buffer.from("this is not audio at all")]), CONFIG);
      assert.equal(junk.status, 400);
      assert.equal(junk.body.code, "H0010");
      assert.deepEqual(await objects(), []);
      assert.deepEqual(
        (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }))).Uploads ?? [],
        [],
      );
      assert.deepEqual(fs.readdirSync(path.join(so.api.dataDir, "spool")), []);
    });

    it("an accepted upload is stored under the prefix, transcribed by the worker process and then removed", async () => {
      const r = await submit(so.api.url, token, SHORT, CONFIG);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const stored = await objects();
      assert.equal(stored.length <= 1, true);
      for (const k of stored) assert.match(k, /^sori\/[A-Za-z0-9_-]{22}$/);
      const body = await waitFinal(so.api.url, token, String(r.body.id));
      assert.equal(body.status, "completed", JSON.stringify(body));
      assertResembles(body.results.utterances.map((u: { msg: string }) => u.msg).join(" "), REFERENCES.jfk, 0.3);
      await eventuallyDeepEqual(objects, []);
      await eventuallyDeepEqual(() => fs.readdirSync(path.join(so.workers[0]!.dataDir, "spool")), []);
    });
  },
);
