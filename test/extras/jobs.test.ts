// GET /v1/transcribe (the caller's jobs, newest first, cursor pagination) and DELETE /v1/transcribe/{id}, against
// the real server: a queued job (no workers) and a completed one (real speech through the engine).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { assertDocumented } from "../helpers/documented.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");
const KO = path.join(TESTDATA, "ko/picovoice_leopard_test_ko.wav");

interface ListBody {
  transcribes: {
    id: string;
    status: string;
    created_at: string;
    finished_at: string | null;
    expired: boolean;
    audio_duration_ms: number | null;
  }[];
  next_cursor: string | null;
}

async function list(
  url: string,
  token: string,
  query = "",
): Promise<{ status: number; body: ListBody & { code?: string } }> {
  const r = await fetch(`${url}/v1/transcribe${query}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await r.json()) as ListBody;
  assertDocumented("GET /v1/transcribe", r.status, body);
  return { status: r.status, body };
}

async function del(url: string, token: string, id: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${url}/v1/transcribe/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${token}` },
  });
  const body = await r.json();
  assertDocumented("DELETE /v1/transcribe/{id}", r.status, body);
  return { status: r.status, body };
}

const blobCount = (dataDir: string): number => fs.readdirSync(path.join(dataDir, "blobs")).length;

describe("job list and delete, jobs left queued (no workers)", () => {
  let sori: SoriProcess;
  let url: string;
  let token: string;
  let otherToken: string;
  let dataDir: string;
  const ids: string[] = [];

  before(async () => {
    dataDir = tempDataDir();
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_WORKERS: "0", SORI_DEFAULT_READ_BURST: "100" };
    const a = createClient(env);
    const b = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, a.client_id, a.client_secret);
    otherToken = await authenticate(url, b.client_id, b.client_secret);
    for (let i = 0; i < 5; i++) {
      const r = await submit(url, token, JFK, {});
      assert.equal(r.status, 200);
      ids.push(String(r.body.id));
    }
    await submit(url, otherToken, JFK, {});
  });
  after(() => sori.stop());

  it("lists the caller's jobs newest first, page by page with the cursor", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await list(url, token, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(r.body.transcribes.length <= 2);
      seen.push(...r.body.transcribes.map((t) => t.id));
      cursor = r.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...ids].reverse());
    const first = (await list(url, token)).body.transcribes[0]!;
    assert.equal(first.status, "transcribing");
    assert.ok(!Number.isNaN(Date.parse(first.created_at)));
    assert.equal(first.finished_at, null);
    assert.equal(first.expired, false);
    assert.ok(first.audio_duration_ms! > 10_000 && first.audio_duration_ms! < 12_000);
  });

  it("filters by status and never shows another client's jobs", async () => {
    assert.equal((await list(url, token, "?status=transcribing")).body.transcribes.length, 5);
    assert.equal((await list(url, token, "?status=completed")).body.transcribes.length, 0);
    const other = (await list(url, otherToken)).body.transcribes;
    assert.equal(other.length, 1);
    assert.ok(!ids.includes(other[0]!.id));
  });

  it("400 H0001 for a bad status, limit or cursor; 401 H0002 without a token", async () => {
    for (const q of ["?status=done", "?limit=0", "?limit=101", "?limit=abc", "?cursor=garbage"]) {
      const r = await list(url, token, q);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.code, "H0001", q);
    }
    assert.equal((await list(url, "nope")).status, 401);
  });

  it("deletes a queued job: its audio is gone now, later reads and deletes answer 404 H0004", async () => {
    const id = ids[0]!;
    const blobsBefore = blobCount(dataDir);
    assert.equal((await del(url, otherToken, id)).body.code, "H0003", "another client may not delete it");
    const r = await del(url, token, id);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { id, deleted: true });
    assert.equal(blobCount(dataDir), blobsBefore - 1);
    for (const res of [await read(url, token, id), await del(url, token, id)]) {
      assert.equal(res.status, 404);
      assert.equal(res.body.code, "H0004");
    }
    assert.ok(!(await list(url, token)).body.transcribes.some((t) => t.id === id), "not listed any more");
    // It no longer counts as in progress, and no worker will claim it.
    const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
    const row = db
      .prepare(
        "SELECT t.state, j.blob_key, j.result, j.deleted_at FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' WHERE j.id = ?",
      )
      .get(id) as Record<string, unknown>;
    db.close();
    assert.equal(row.state, "failed");
    assert.equal(row.blob_key, null);
    assert.ok(typeof row.deleted_at === "number");
  });
});

describe("delete a completed job (real speech)", () => {
  let sori: SoriProcess;
  let url: string;
  let token: string;
  let dataDir: string;

  before(async () => {
    dataDir = tempDataDir();
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200" };
    const a = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, a.client_id, a.client_secret);
  });
  after(() => sori.stop());

  it("removes the result now: read, export and list no longer have it", async () => {
    const r = await submit(url, token, KO, {});
    const id = String(r.body.id);
    const done = await waitFinal(url, token, id);
    assert.equal(done.status, "completed");
    const listed = (await list(url, token, "?status=completed")).body.transcribes;
    assert.equal(listed[0]!.id, id);
    assert.ok(listed[0]!.finished_at !== null);

    assert.equal((await del(url, token, id)).status, 200);
    assert.equal((await read(url, token, id)).body.code, "H0004");
    const exp = await fetch(`${url}/v1/transcribe/${id}/export?format=txt`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(exp.status, 404);
    assert.deepEqual((await list(url, token)).body.transcribes, []);
    const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
    const row = db
      .prepare(
        "SELECT t.state, j.result FROM jobs j JOIN tasks t ON t.job_id = j.id AND t.kind = 'transcribe' WHERE j.id = ?",
      )
      .get(id) as Record<string, unknown>;
    db.close();
    assert.equal(row.result, null, "the transcript is gone from the store");
    assert.equal(row.state, "completed");
    assert.equal(blobCount(dataDir), 0);
  });
});
