// The @sori/client package and `sori submit` against the real server with real speech: token reuse and refresh,
// submit from a path, a Buffer and a stream, wait with backoff on A0003 and A0002, export, list, delete.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SoriClient, SoriError, type TranscribeConfig } from "@sori/client";
import { assertResembles, normalizedCer } from "../helpers/cer.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");
const KO = path.join(TESTDATA, "ko/picovoice_leopard_test_ko.wav");
const JFK_TEXT =
  "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.";
const WHISPER: TranscribeConfig = { model_name: "whisper", language: "detect", language_candidates: ["en"] };

describe("@sori/client against the real server", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  const creds = (extra: string[] = []) => {
    const c = createClient(env, extra);
    return { baseUrl: sori.url, clientId: c.client_id, clientSecret: c.client_secret };
  };

  before(async () => {
    env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_PORT: "0",
      SORI_WORKERS: "1",
      SORI_POLL_MS: "200",
      SORI_DEFAULT_READ_BURST: "3",
    };
    sori = await startSori("serve", env);
  });
  after(() => sori.stop());

  it("authenticates once, reuses the token, and refreshes it before expire_at", async () => {
    let authCalls = 0;
    const counting: typeof fetch = (input, init) => {
      if (String(input).endsWith("/v1/authenticate")) authCalls += 1;
      return fetch(input, init);
    };
    const client = new SoriClient({ ...creds(), fetch: counting, refreshMarginS: 60 });
    const first = await client.accessToken();
    assert.equal(await client.accessToken(), first);
    await client.list();
    assert.equal(authCalls, 1);
    // Six hours on (the token lifetime), less than a minute before expiry: a new token.
    const later = Date.now() / 1000 + 6 * 3600 - 30;
    const second = await client.accessToken(later);
    assert.notEqual(second, first);
    assert.equal(authCalls, 2);
    const bad = await new SoriClient({ ...creds(), clientSecret: "wrong" }).list().catch((e: unknown) => e);
    assert.ok(bad instanceof SoriError && bad.status === 401 && bad.code === "H0002");
  });

  it("submits a path, a Buffer and a stream; waits; exports; lists; deletes", async () => {
    const client = new SoriClient({ ...creds(), pollIntervalMs: 300 });
    const ids = [
      await client.submit(JFK, WHISPER),
      await client.submit(fs.readFileSync(JFK), WHISPER, { filename: "jfk.flac" }),
      await client.submit(fs.createReadStream(JFK), WHISPER),
    ];
    for (const id of ids) {
      const r = await client.wait(id);
      assert.equal(r.status, "completed");
      if (r.status !== "completed") continue;
      const text = r.results!.utterances.map((u) => u.msg).join(" ");
      assert.ok(normalizedCer(text, JFK_TEXT) < 0.15, text);
    }
    const srt = await client.export(ids[0]!, "srt");
    assert.match(srt, /^1\n00:00:\d{2},\d{3} --> /);
    const listed = await client.list({ limit: 2 });
    assert.deepEqual(
      listed.transcribes.map((t) => t.id),
      [ids[2], ids[1]],
    );
    assert.ok(listed.next_cursor);
    const rest = await client.list({ cursor: listed.next_cursor! });
    assert.deepEqual(
      rest.transcribes.map((t) => t.id),
      [ids[0]],
    );
    await client.delete(ids[0]!);
    const gone = await client.get(ids[0]!).catch((e: unknown) => e);
    assert.ok(gone instanceof SoriError && gone.code === "H0004");
  });

  it("backs off on 429 A0003 (reads too fast) and still gets the result", async () => {
    const client = new SoriClient({ ...creds(["--read-rps", "0.5"]), pollIntervalMs: 50, maxBackoffMs: 2000 });
    const id = await client.submit(JFK, WHISPER);
    const r = await client.wait(id);
    assert.equal(r.status, "completed");
  });

  it("backs off on 429 A0002 (too many jobs in progress) until a slot frees", async () => {
    // Enough retries to outlast the first job on a loaded machine (8, the default, is about 15 s at 2 s apart).
    const client = new SoriClient({
      ...creds(["--max-concurrent", "1"]),
      pollIntervalMs: 300,
      maxBackoffMs: 2000,
      maxRetries: 150,
    });
    const first = await client.submit(KO, {});
    const started = Date.now();
    const second = await client.submit(KO, {}); // refused with A0002 until the first is final
    assert.equal((await client.get(first)).status, "completed", "the second was accepted only after the first ended");
    assert.ok(Date.now() - started >= 900);
    assert.equal((await client.wait(second)).status, "completed");
  });
});

describe("sori submit FILE --wait --format srt (the CLI through @sori/client)", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let creds: { client_id: string; client_secret: string };

  before(async () => {
    env = { SORI_DATA_DIR: tempDataDir(), SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200" };
    creds = createClient(env);
    sori = await startSori("serve", env);
  });
  after(() => sori.stop());

  const cli = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "src/cli/main.ts"), "submit", ...args], {
      env: { ...process.env, SORI_DATA_DIR: tempDataDir() },
      encoding: "utf8",
    });

  it("prints subtitles of the finished job", () => {
    const credFile = path.join(tempDataDir(), "creds.json");
    fs.writeFileSync(credFile, JSON.stringify(creds));
    const r = cli([
      JFK,
      "--url",
      sori.url,
      "--credentials",
      credFile,
      "--config",
      JSON.stringify(WHISPER),
      "--wait",
      "--format",
      "srt",
      "--poll-ms",
      "300",
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^1\n00:00:00,\d{3} --> 00:00:\d{2},\d{3}\n/);
    const text = r.stdout
      .split("\n")
      .filter((l) => l && !/^\d+$/.test(l) && !l.includes(" --> "))
      .join(" ");
    assertResembles(text, JFK_TEXT, 0.3, "subtitles");
  });

  it("without --wait prints the id; a server error is reported with its code", () => {
    const r = cli([JFK, "--url", sori.url, "--client-id", creds.client_id, "--client-secret", creds.client_secret]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^[A-Za-z0-9_-]{22}\n$/);
    const bad = cli([
      JFK,
      "--url",
      sori.url,
      "--client-id",
      creds.client_id,
      "--client-secret",
      creds.client_secret,
      "--config",
      '{"model_name":"x"}',
    ]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /400 H0001: config\.model_name/);
  });
});
