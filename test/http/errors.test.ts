// Every status/code row of the spec's error tables, against the real server (no workers, so jobs stay queued).
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { SignJWT, UnsecuredJWT } from "jose";
import { authenticate, read, submit } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac"); // 11 s
const LONG = path.join(TESTDATA, "en/earnings22_1_4482311_3_62.wav"); // 60 s
const OGG = path.join(TESTDATA, "formats/picovoice_leopard_test_ko.ogg");
const WEBM = path.join(TESTDATA, "formats/picovoice_leopard_test_ko.webm");

describe("spec error tables over HTTP", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let token: string;
  let url: string;

  before(async () => {
    env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_MAX_FILE_BYTES: String(3 * 1024 * 1024),
      SORI_MAX_AUDIO_S: "30",
      SORI_DEFAULT_READ_BURST: "5",
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c.client_id, c.client_secret);
  });
  after(() => sori.stop());

  describe("POST /v1/authenticate", () => {
    it("issues a JWT with expire_at in epoch seconds", async () => {
      const c = createClient(env);
      const r = await fetch(`${url}/v1/authenticate`, {
        method: "POST",
        body: new URLSearchParams({ client_id: c.client_id, client_secret: c.client_secret }),
      });
      assert.equal(r.status, 200);
      const body = (await r.json()) as { access_token: string; expire_at: number };
      assert.equal(body.access_token.split(".").length, 3);
      assert.ok(Math.abs(body.expire_at - (Date.now() / 1000 + 6 * 3600)) < 60);
    });
    it("accepts the fields as multipart form data too (curl -F)", async () => {
      const c = createClient(env);
      const form = new FormData();
      form.append("client_id", c.client_id);
      form.append("client_secret", c.client_secret);
      const r = await fetch(`${url}/v1/authenticate`, { method: "POST", body: form });
      assert.equal(r.status, 200);
    });
    it("401 H0002 for a wrong secret or unknown client", async () => {
      for (const [id, secret] of [
        ["nope", "nope"],
        [createClient(env).client_id, "wrong"],
      ]) {
        const r = await fetch(`${url}/v1/authenticate`, {
          method: "POST",
          body: new URLSearchParams({ client_id: id!, client_secret: secret! }),
        });
        assert.equal(r.status, 401);
        assert.deepEqual(Object.keys((await r.json()) as object).sort(), ["code", "msg"]);
      }
    });
    it("400 H0001 when a field is missing", async () => {
      const r = await fetch(`${url}/v1/authenticate`, {
        method: "POST",
        body: new URLSearchParams({ client_id: "x" }),
      });
      assert.equal(r.status, 400);
      assert.equal(((await r.json()) as { code: string }).code, "H0001");
    });
  });

  describe("submit", () => {
    it("200 with an id for a valid request", async () => {
      const r = await submit(url, token, JFK, {});
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body), ["id"]);
      assert.match(String(r.body.id), /^[A-Za-z0-9_-]+$/);
    });

    const badConfigs: [string, unknown][] = [
      ["not JSON", "{model_name:"],
      ["not an object", "[1,2]"],
      ["unknown model", { model_name: "gpt" }],
      ["whisper without language", { model_name: "whisper" }],
      ["detect with sommers", { language: "detect" }],
      ["unsupported language", { language: "fr" }],
      ["spk_count < 0", { use_diarization: true, diarization: { spk_count: -1 } }],
      ["paragraph max < 1", { paragraph_splitter: { max: 0 } }],
      ["boolean as string", { use_itn: "yes" }],
      ["bad domain", { domain: "MEETING" }],
      ["keyword too long", { keywords: ["a".repeat(21)] }],
      ["too many keywords", { keywords: Array.from({ length: 501 }, (_, i) => `k${i}`) }],
      ["bad candidate code", { model_name: "whisper", language: "detect", language_candidates: ["xx"] }],
      ["refinement with multi-channel", { use_refinement: true, use_multi_channel: true }],
    ];
    for (const [name, config] of badConfigs) {
      it(`400 H0001: ${name}`, async () => {
        const r = await submit(url, token, JFK, config);
        assert.equal(r.status, 400, JSON.stringify(r.body));
        assert.equal(r.body.code, "H0001");
        assert.equal(typeof r.body.msg, "string");
      });
    }

    it("400 H0001 without a file part or without a config part", async () => {
      const noFile = new FormData();
      noFile.append("config", "{}");
      let r = await fetch(`${url}/v1/transcribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: noFile,
      });
      assert.equal(r.status, 400);
      assert.equal(((await r.json()) as { code: string }).code, "H0001");
      const noConfig = new FormData();
      noConfig.append("file", new Blob([fs.readFileSync(JFK)]), "a.flac");
      r = await fetch(`${url}/v1/transcribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: noConfig,
      });
      assert.equal(r.status, 400);
      assert.equal(((await r.json()) as { code: string }).code, "H0001");
    });

    it("400 H0001 for a body that is not multipart", async () => {
      const r = await fetch(`${url}/v1/transcribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(r.status, 400);
      assert.equal(((await r.json()) as { code: string }).code, "H0001");
    });

    it("unknown config fields are ignored", async () => {
      const r = await submit(url, token, JFK, {
        something_new: 1,
        use_diarization: true,
        diarization: { other: true },
      });
      assert.equal(r.status, 200);
    });

    it("parts of other names are ignored before the file, within the form's bounds; past them 400 H0001", async () => {
      const post = async (extra: [string, string][]) => {
        const form = new FormData();
        form.append("config", "{}");
        for (const [name, value] of extra) form.append(name, value);
        form.append("file", new Blob([fs.readFileSync(JFK)]), "a.flac");
        const r = await fetch(`${url}/v1/transcribe`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        return { status: r.status, body: (await r.json()) as { code?: string; msg?: string } };
      };
      // More than ten text parts before the file: the parser's old bound of ten left the file part unreadable
      // (found by schemathesis).
      const ignored = Array.from({ length: 20 }, (_, i): [string, string] => [`x${i % 10}`, "{}"]);
      assert.equal((await post(ignored)).status, 200);
      const parts = await post(Array.from({ length: 70 }, (): [string, string] => ["x", "{}"]));
      assert.deepEqual([parts.status, parts.body.code], [400, "H0001"]);
      assert.match(String(parts.body.msg), /at most 64 text parts/);
      // The parser refuses the names of Object.prototype's members (docs/api.md).
      const proto = await post([["constructor", "{}"]]);
      assert.deepEqual([proto.status, proto.body.code], [400, "H0001"]);
    });

    for (const [name, file] of [
      ["ogg", OGG],
      ["webm", WEBM],
    ] as const) {
      it(`400 H0010 for ${name} (decided by content, not name)`, async () => {
        const blob = new Blob([fs.readFileSync(file)]);
        const form = new FormData();
        form.append("config", "{}");
        form.append("file", blob, "disguised.mp3");
        const r = await fetch(`${url}/v1/transcribe`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        assert.equal(r.status, 400);
        assert.equal(((await r.json()) as { code: string }).code, "H0010");
      });
    }
    it("400 H0010 for random bytes and for an empty file", async () => {
      for (const bytes of [Buffer.from("definitely not audio, just some text ".repeat(50)), Buffer.alloc(0)]) {
        const r = await submit(url, token, new Blob([bytes]), {});
        assert.equal(r.status, 400);
        assert.equal(r.body.code, "H0010");
      }
    });

    it("401 H0002 without, with a malformed, forged, unsigned or expired token", async () => {
      const key = Buffer.from(fs.readFileSync(path.join(env.SORI_DATA_DIR!, "jwt.key"), "utf8").trim(), "base64url");
      const expired = await new SignJWT({})
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("x")
        .setIssuer("sori")
        .setAudience("sori-api")
        .setIssuedAt(1000)
        .setExpirationTime(2000)
        .sign(key);
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("x")
        .setIssuer("sori")
        .setAudience("sori-api")
        .setExpirationTime("1h")
        .sign(new Uint8Array(32));
      const unsigned = new UnsecuredJWT({})
        .setSubject("x")
        .setIssuer("sori")
        .setAudience("sori-api")
        .setExpirationTime("1h")
        .encode();
      for (const header of [
        undefined,
        "Bearer",
        "Basic abc",
        `Bearer ${expired}`,
        `Bearer ${forged}`,
        `Bearer ${unsigned}`,
        `Bearer ${token}x`,
      ]) {
        const form = new FormData();
        form.append("config", "{}");
        form.append("file", new Blob([fs.readFileSync(JFK)]), "a.flac");
        const r = await fetch(`${url}/v1/transcribe`, {
          method: "POST",
          headers: header ? { authorization: header } : {},
          body: form,
        });
        assert.equal(r.status, 401, String(header));
        assert.equal(((await r.json()) as { code: string }).code, "H0002");
      }
    });

    it("413 H0005 when the file is over the size limit, declared or streamed", async () => {
      for (const declareLength of [true, false]) {
        const r = await rawUpload(url, token, 64 * 1024 * 1024, declareLength);
        assert.equal(r.status, 413, `declared length: ${declareLength}`);
        assert.equal(r.body.code, "H0005");
        // The server stops reading at the limit instead of swallowing the whole upload.
        assert.ok(r.sentBytes < 64 * 1024 * 1024, `sent ${r.sentBytes} bytes (declared length: ${declareLength})`);
      }
    });

    it("413 H0006 when the audio is over the length limit", async () => {
      const r = await submit(url, token, LONG, {});
      assert.equal(r.status, 413);
      assert.equal(r.body.code, "H0006");
    });

    it("429 A0001 when the usage quota is used up", async () => {
      const c = createClient(env, ["--quota-hours", "0.004"]); // 14.4 s
      const t = await authenticate(url, c.client_id, c.client_secret);
      assert.equal((await submit(url, t, JFK, {})).status, 200); // 11 s
      const r = await submit(url, t, JFK, {});
      assert.equal(r.status, 429);
      assert.equal(r.body.code, "A0001");
    });

    it("429 A0002 when too many jobs are in progress", async () => {
      const c = createClient(env, ["--max-concurrent", "1"]);
      const t = await authenticate(url, c.client_id, c.client_secret);
      assert.equal((await submit(url, t, JFK, {})).status, 200);
      const r = await submit(url, t, JFK, {});
      assert.equal(r.status, 429);
      assert.equal(r.body.code, "A0002");
    });

    it("403 H0003 when a standard client asks for an Enterprise add-on", async () => {
      for (const config of [{ use_refinement: true }, { use_insight: true }]) {
        const r = await submit(url, token, JFK, config);
        assert.equal(r.status, 403);
        assert.equal(r.body.code, "H0003");
      }
    });
  });

  describe("read", () => {
    let jobId: string;
    before(async () => {
      jobId = String((await submit(url, token, JFK, {})).body.id);
    });

    it("200 with only id and status while transcribing", async () => {
      const r = await read(url, token, jobId);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { id: jobId, status: "transcribing" });
    });
    it("400 H0001 for a malformed id or result value", async () => {
      for (const [id, q] of [
        ["bad$id", ""],
        [jobId, "?result=raw"],
      ] as const) {
        const r = await read(url, token, encodeURIComponent(id), q);
        assert.equal(r.status, 400);
        assert.equal(r.body.code, "H0001");
      }
    });
    it("400 H0001 for result=refined when refinement was not requested", async () => {
      const r = await read(url, token, jobId, "?result=refined");
      assert.equal(r.status, 400);
      assert.equal(r.body.code, "H0001");
    });
    it("401 H0002 without a valid token", async () => {
      const r = await fetch(`${url}/v1/transcribe/${jobId}`);
      assert.equal(r.status, 401);
      assert.equal(((await r.json()) as { code: string }).code, "H0002");
    });
    it("403 H0003 for another client's job", async () => {
      const other = createClient(env);
      const t = await authenticate(url, other.client_id, other.client_secret);
      const r = await read(url, t, jobId);
      assert.equal(r.status, 403);
      assert.equal(r.body.code, "H0003");
    });
    it("404 H0004 for an unknown id", async () => {
      const r = await read(url, token, "doesNotExist123");
      assert.equal(r.status, 404);
      assert.equal(r.body.code, "H0004");
    });
    it("410 H0007 once the result has expired", async () => {
      const db = new Sqlite(path.join(env.SORI_DATA_DIR!, "sori.db"));
      db.prepare("UPDATE tasks SET state='completed', finished_at=1 WHERE job_id=? AND kind='transcribe'").run(jobId);
      db.prepare("UPDATE jobs SET result='{}', expires_at=2 WHERE id=?").run(jobId);
      db.close();
      const r = await read(url, token, jobId);
      assert.equal(r.status, 410);
      assert.equal(r.body.code, "H0007");
    });
    it("429 A0003 when polling too fast", async () => {
      const c = createClient(env, ["--read-rps", "0.1"]);
      const t = await authenticate(url, c.client_id, c.client_secret);
      const id = String((await submit(url, t, JFK, {})).body.id);
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) codes.push((await read(url, t, id)).status);
      assert.ok(
        codes.slice(0, 5).every((s) => s === 200),
        codes.join(),
      );
      const r = await read(url, t, id);
      assert.equal(r.status, 429);
      assert.equal(r.body.code, "A0003");
    });
  });

  describe("500 E500 for a real server fault", () => {
    it("submit and read answer E500 when the store is broken, then the body is still {code,msg}", async () => {
      const id = String((await submit(url, token, JFK, {})).body.id);
      const db = new Sqlite(path.join(env.SORI_DATA_DIR!, "sori.db"));
      db.exec("ALTER TABLE jobs RENAME TO jobs_broken");
      try {
        const s = await submit(url, token, JFK, {});
        assert.equal(s.status, 500);
        assert.deepEqual(s.body, { code: "E500", msg: "internal server error" });
        const r = await read(url, token, id);
        assert.equal(r.status, 500);
        assert.equal(r.body.code, "E500");
      } finally {
        db.exec("ALTER TABLE jobs_broken RENAME TO jobs");
        db.close();
      }
    });
  });
});

/** A multipart upload over raw http, so that the answer can be read while the body is still being sent (fetch
 * gives up on the whole exchange when the server stops reading). The file part is `size` zero bytes. */
function rawUpload(
  url: string,
  token: string,
  size: number,
  declareLength: boolean,
): Promise<{ status: number; body: any; sentBytes: number }> {
  const boundary = "soriTestBoundary";
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="config"\r\n\r\n{}\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.wav"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(64 * 1024);
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let done = false;
    const headers: http.OutgoingHttpHeaders = {
      authorization: `Bearer ${token}`,
      "content-type": `multipart/form-data; boundary=${boundary}`,
    };
    if (declareLength) headers["content-length"] = head.length + size + tail.length;
    const req = http.request(`${url}/v1/transcribe`, { method: "POST", headers }, (res) => {
      done = true;
      let text = "";
      res
        .setEncoding("utf8")
        .on("data", (d) => (text += d))
        .on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), sentBytes }));
    });
    req.on("error", (err) => (done ? undefined : reject(err)));
    const pump = (): void => {
      while (!done && sentBytes < size) {
        sentBytes += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!done) req.end(tail);
    };
    req.write(head);
    pump();
  });
}
