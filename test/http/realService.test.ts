// sori against the real service's measured behaviour (docs/api.md, "The real service's rules"): every row of the
// public client's probe table (rtzr-cli, docs/rtzr-config-constraints.md) gets the real service's status, and the
// request shapes the public clients send are accepted. No workers: jobs stay queued.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, submit } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");

/** The probe table: id, raw config, the real service's status (and its message for a 400). */
export const PROBES: [string, Record<string, unknown>, 200 | 400, RegExp?][] = [
  ["T0", { model_name: "sommers" }, 200],
  [
    "T1",
    { model_name: "sommers", diarization: { spk_count: 2 } },
    400,
    /diarization cannot be used without use_diarization/,
  ],
  [
    "T2",
    { model_name: "sommers", use_diarization: false, diarization: { spk_count: 2 } },
    400,
    /diarization cannot be used without use_diarization/,
  ],
  ["T3", { model_name: "sommers", paragraph_splitter: { max: 80 } }, 200],
  ["T4", { model_name: "sommers", use_paragraph_splitter: false, paragraph_splitter: { max: 80 } }, 200],
  ["T5", { model_name: "whisper", language: "en", use_itn: true }, 200],
  ["T6", { model_name: "sommers", language: "detect" }, 400, /unsupported language/],
  ["T7", { model_name: "sommers", language: "ko", language_candidates: ["ko", "en"] }, 400, /unsupported language/],
  ["T8", { model_name: "sommers", language: "ja", keywords: ["에스티티"] }, 200],
  ["T9", { model_name: "whisper" }, 400, /unsupported language/],
  ["T10", { model_name: "sommers", totally_made_up_field: true }, 200],
  ["P1", { model_name: "whisper", language: "ko", language_candidates: ["ko", "en"] }, 200],
  ["P2", { model_name: "whisper", language: "detect", language_candidates: ["ko", "en"] }, 200],
  ["P3", { model_name: "whisper", language: "multi", language_candidates: ["ko", "en"] }, 200],
  ["P4", { model_name: "whisper", language: "ko" }, 200],
  ["P5", { model_name: "sommers", language_candidates: ["ko", "en"] }, 400, /unsupported language/],
];

/** A multipart body written by hand, part by part, so that each client's exact framing can be reproduced. */
function multipart(parts: { name: string; filename?: string; type?: string; data: Buffer | string }[]): {
  body: Buffer;
  type: string;
} {
  const boundary = "----sori-client-shape-" + Math.random().toString(16).slice(2);
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(
      Buffer.from(head + "\r\n"),
      Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data),
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

/** POSTs a body; `chunked` sends it without Content-Length, as the Go SDK's io.Pipe does. */
function post(
  url: string,
  token: string,
  m: { body: Buffer; type: string },
  chunked = false,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      "content-type": m.type,
      accept: "application/json",
    };
    if (!chunked) headers["content-length"] = String(m.body.length);
    const req = http.request(`${url}/v1/transcribe`, { method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    if (chunked) {
      for (let i = 0; i < m.body.length; i += 32 * 1024) req.write(m.body.subarray(i, i + 32 * 1024));
      req.end();
    } else req.end(m.body);
  });
}

/** A WAV whose fmt chunk names a codec tag FFmpeg has no decoder for. */
function wavWithTag(tag: number): string {
  const data = Buffer.alloc(32_000);
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(tag, 0);
  fmt.writeUInt16LE(1, 2);
  fmt.writeUInt32LE(16_000, 4);
  fmt.writeUInt32LE(32_000, 8);
  fmt.writeUInt16LE(2, 12);
  fmt.writeUInt16LE(16, 14);
  const body = Buffer.concat([Buffer.from("WAVEfmt "), u32(16), fmt, Buffer.from("data"), u32(data.length), data]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sori-wav-")), "tag.wav");
  fs.writeFileSync(file, Buffer.concat([Buffer.from("RIFF"), u32(body.length), body]));
  return file;
}
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

describe("the real service's rules and the public clients' request shapes", () => {
  let sori: SoriProcess;
  let token: string;
  let url: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    env = { SORI_DATA_DIR: tempDataDir(), SORI_WORKERS: "0", SORI_PORT: "0", SORI_DEFAULT_READ_BURST: "50" };
    const c = createClient(env, ["--max-concurrent", "100"]);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c.client_id, c.client_secret);
  });
  after(() => sori.stop());

  for (const [id, config, status, message] of PROBES) {
    it(`probe ${id}: ${JSON.stringify(config)} → ${status}`, async () => {
      const r = await submit(url, token, JFK, config);
      assert.equal(r.status, status, JSON.stringify(r.body));
      if (status === 200) assert.match(String(r.body.id), /^[A-Za-z0-9_-]+$/);
      else {
        assert.deepEqual(Object.keys(r.body).sort(), ["code", "msg"]);
        assert.equal(r.body.code, "H0001");
        assert.match(String(r.body.msg), message!);
      }
    });
  }

  it("authenticate as every client does: form-encoded; expire_at an integer of epoch seconds (Go reads int64)", async () => {
    const c = createClient(env);
    const r = await fetch(`${url}/v1/authenticate`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: c.client_id, client_secret: c.client_secret }),
    });
    const body = (await r.json()) as { access_token: unknown; expire_at: unknown };
    assert.equal(typeof body.access_token, "string");
    assert.ok(Number.isInteger(body.expire_at) && (body.expire_at as number) > Date.now() / 1000);
  });

  it("a rejected token is 401 H0002 {code,msg}, on which the clients authenticate again", async () => {
    const r = await fetch(`${url}/v1/transcribe/abc`, { headers: { authorization: "Bearer expired.or.wrong" } });
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { code: string }).code, "H0002");
  });

  it("Go SDK: chunked body, config part without a content type, file named by its path", async () => {
    const m = multipart([
      { name: "config", data: JSON.stringify({ model_name: "sommers", use_word_timestamp: true }) },
      { name: "file", filename: JFK, type: "application/octet-stream", data: fs.readFileSync(JFK) },
    ]);
    const r = await post(url, token, m, true);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  it("rtzr-cli (fetch FormData): the file part before the config part", async () => {
    const form = new FormData();
    form.append("file", new Blob([fs.readFileSync(JFK)]), "whisper_jfk.flac");
    form.append(
      "config",
      JSON.stringify({
        model_name: "whisper",
        language: "en",
        use_itn: true,
        use_disfluency_filter: true,
        use_paragraph_splitter: true,
      }),
    );
    const r = await fetch(`${url}/v1/transcribe`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      body: form,
    });
    assert.equal(r.status, 200, await r.text());
  });

  it("rtzr-stt-cli (requests): its default config, sorted keys and an empty keywords array", async () => {
    const config =
      '{"domain":"GENERAL","keywords":[],"language":"ko","model_name":"sommers","use_diarization":false,"use_disfluency_filter":false,"use_itn":true,"use_paragraph_splitter":false,"use_profanity_filter":false,"use_word_timestamp":false}';
    const m = multipart([
      { name: "config", data: config },
      { name: "file", filename: "audio.flac", data: fs.readFileSync(JFK) },
    ]);
    assert.equal((await post(url, token, m)).status, 200);
  });

  it("a config part sent with Content-Type application/json (a public Java sample) or as a file is read as JSON text", async () => {
    for (const config of [
      { name: "config", type: "application/json", data: '{"model_name":"sommers"}' },
      { name: "config", type: "application/json; charset=utf-8", filename: "blob", data: '{"model_name":"sommers"}' },
    ]) {
      const r = await post(
        url,
        token,
        multipart([config, { name: "file", filename: "a.flac", data: fs.readFileSync(JFK) }]),
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const bad = await post(
      url,
      token,
      multipart([
        { name: "config", type: "application/json", data: '{"model_name":"sommers", "diarization":{"spk_count":2}}' },
        { name: "file", filename: "a.flac", data: fs.readFileSync(JFK) },
      ]),
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, "H0001");
    const broken = await post(
      url,
      token,
      multipart([
        { name: "config", type: "application/json", data: "{nope" },
        { name: "file", filename: "a.flac", data: fs.readFileSync(JFK) },
      ]),
    );
    assert.equal(broken.status, 400);
    assert.equal(broken.body.code, "H0001");
  });

  it("a WAV whose codec the decoder does not know is refused at submit: 400 H0010, naming the tag only", async () => {
    const r = await submit(url, token, wavWithTag(0x1234), {});
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { code: "H0010", msg: "unsupported WAV codec (format tag 0x1234)" });
    // A PCM WAV is accepted.
    assert.equal((await submit(url, token, wavWithTag(0x0001), {})).status, 200);
  });
});
