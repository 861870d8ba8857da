// Multipart abuse, hostile ids and hostile file names against a real server (no workers: accepted jobs only queue).
// Each is answered quickly with a spec error, never a 5xx; no name from a request reaches the file system.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, submit } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, TESTDATA, unthrottledApiEnv } from "../helpers/server.js";
import { rawPost } from "./raw.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");
const MULTIPART_ROUTES = ["/v1/transcribe", "/v1/authenticate", "/v1/audio/transcriptions"];
const QUICK_MS = 5000;

/** A multipart body from [headers, content] parts, with CRLF line ends. */
function multipart(boundary: string, parts: [string, string | Buffer][], close = true): Buffer {
  const chunks: Buffer[] = [];
  for (const [headers, content] of parts) {
    chunks.push(
      Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`, "latin1"),
      Buffer.isBuffer(content) ? content : Buffer.from(content),
      Buffer.from("\r\n"),
    );
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}
const field = (name: string, value: string): [string, string] => [
  `content-disposition: form-data; name="${name}"`,
  value,
];
const file = (name: string, filename: string, content: Buffer): [string, Buffer] => [
  `content-disposition: form-data; name="${name}"; filename="${filename}"\r\ncontent-type: application/octet-stream`,
  content,
];

/** The spec code of an answer: `code`, or `error.code` in the OpenAI endpoint's shape. */
function codeOf(text: string): string | undefined {
  const body = JSON.parse(text) as { code?: string; error?: { code?: string } };
  return body.code ?? body.error?.code;
}

/** GET/DELETE with a raw path (fetch and URL would normalize `..` and percent-escapes away). */
function rawRequest(
  url: string,
  method: string,
  rawPath: string,
  token: string,
): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, method, path: rawPath, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let text = "";
        res
          .setEncoding("utf8")
          .on("data", (d) => (text += d))
          .on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.setTimeout(QUICK_MS, () => req.destroy(new Error(`no answer within ${QUICK_MS} ms`)));
    req.on("error", reject);
    req.end();
  });
}

describe("multipart, id and file-name abuse", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let token: string;
  const post = (
    route: string,
    body: Buffer,
    contentType = "multipart/form-data; boundary=XyZ",
  ): Promise<{ status: number; text: string }> =>
    rawPost(`${sori.url}${route}`, { authorization: `Bearer ${token}`, "content-type": contentType }, body, QUICK_MS);

  before(async () => {
    env = unthrottledApiEnv();
    const c = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await sori.stop();
    assert.deepEqual(
      sori.logs.filter((l) => l.includes('"unhandled error"')),
      [],
      "the server answered a 5xx",
    );
    fs.rmSync(env.SORI_DATA_DIR!, { recursive: true, force: true });
  });

  const cases: [string, () => Buffer, string?][] = [
    [
      "10,000 parts",
      () =>
        multipart(
          "XyZ",
          Array.from({ length: 10_000 }, (_, i) => field(`f${i}`, "x")),
        ),
    ],
    [
      "10,000 parts all named config",
      () =>
        multipart(
          "XyZ",
          Array.from({ length: 10_000 }, () => field("config", "{}")),
        ),
    ],
    [
      "a 200 KB part header",
      () =>
        multipart("XyZ", [[`content-disposition: form-data; name="config"\r\nx-junk: ${"a".repeat(200_000)}`, "{}"]]),
    ],
    [
      "5,000 header lines in one part",
      () => multipart("XyZ", [[`content-disposition: form-data; name="config"${"\r\nx-h: v".repeat(5000)}`, "{}"]]),
    ],
    ["a 2 MB field", () => multipart("XyZ", [field("config", `{"insight":{"prompt":"${"p".repeat(2_000_000)}"}}`)])],
    [
      "two file parts",
      () =>
        multipart("XyZ", [
          field("config", "{}"),
          file("file", "a.flac", fs.readFileSync(JFK)),
          file("file", "b.flac", fs.readFileSync(JFK)),
        ]),
    ],
    ["no file part", () => multipart("XyZ", [field("config", "{}"), field("model", "whisper-1")])],
    ["missing boundary in the content type", () => multipart("XyZ", [field("config", "{}")]), "multipart/form-data"],
    ["empty boundary", () => multipart("", [field("config", "{}")]), "multipart/form-data; boundary="],
    [
      "a 200-character boundary",
      () => multipart("b".repeat(200), [field("config", "{}")]),
      `multipart/form-data; boundary=${"b".repeat(200)}`,
    ],
    [
      "body cut in the middle of a part",
      () => multipart("XyZ", [field("config", "{}"), file("file", "a.flac", fs.readFileSync(JFK))]).subarray(0, 5000),
    ],
    ["no closing delimiter", () => multipart("XyZ", [field("config", "{}")], false)],
    [
      "field names with control characters",
      () => multipart("XyZ", [field("con\u0000fig", "{}"), field("file\r\nx", "y"), field("\u001b[31m", "z")]),
    ],
    ["empty body", () => Buffer.alloc(0)],
  ];
  for (const [name, body, contentType] of cases) {
    it(`${name}: 4xx with a spec code, quickly, on every multipart route`, async () => {
      const bytes = body();
      for (const route of MULTIPART_ROUTES) {
        const t0 = Date.now();
        const r = await post(route, bytes, contentType);
        const ms = Date.now() - t0;
        assert.ok(r.status >= 400 && r.status < 500, `${route}: ${r.status} ${r.text.slice(0, 300)}`);
        const code = codeOf(r.text);
        assert.ok(code && /^H00(01|02|05|10)$/.test(code), `${route}: ${r.text.slice(0, 300)}`);
        assert.ok(ms < QUICK_MS, `${route} took ${ms} ms`);
      }
    });
  }

  it("a body refused half-read does not stall the next request on the same keep-alive connection", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const u = new URL(sori.url);
    const send = (
      method: string,
      p: string,
      headers: Record<string, string | number>,
      body?: Buffer,
    ): Promise<{ status: number; port: number }> =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: u.hostname, port: u.port, method, path: p, agent, headers }, (res) => {
          res.resume().on("end", () => resolve({ status: res.statusCode ?? 0, port: res.socket?.localPort ?? 0 }));
        });
        req.setTimeout(QUICK_MS, () => req.destroy(new Error(`${method} ${p}: no answer within ${QUICK_MS} ms`)));
        req.on("error", reject);
        req.end(body);
      });
    try {
      const many = multipart(
        "XyZ",
        Array.from({ length: 10_000 }, (_, i) => field(`f${i}`, "x")),
      );
      const first = await send(
        "POST",
        "/v1/transcribe",
        {
          authorization: `Bearer ${token}`,
          "content-type": "multipart/form-data; boundary=XyZ",
          "content-length": many.length,
        },
        many,
      );
      assert.equal(first.status, 400);
      const next = await send("GET", "/healthz", {});
      assert.equal(next.status, 200);
      assert.equal(next.port, first.port, "the connection was kept and reused");
    } finally {
      agent.destroy();
    }
  });

  it("a file name with traversal or control characters never reaches the file system", async () => {
    const marker = `sori-evil-${randomBytes(6).toString("hex")}`;
    const names = [
      `../../../../../../../../tmp/${marker}`,
      `..\\..\\..\\${marker}`,
      `/tmp/${marker}`,
      `${marker}\u0000.wav`,
      `%2e%2e%2f${marker}`,
    ];
    for (const filename of names) {
      const r = await post(
        "/v1/transcribe",
        multipart("XyZ", [field("config", "{}"), file("file", filename, fs.readFileSync(JFK))]),
      );
      assert.equal(r.status, 200, r.text); // accepted: the name is simply not used
    }
    assert.ok(!fs.existsSync(path.join(os.tmpdir(), marker)), "a file was written where the name pointed");
    const stored = walk(env.SORI_DATA_DIR!);
    assert.deepEqual(
      stored.filter((p) => p.includes(marker) || p.includes("..")),
      [],
    );
    const blobs = stored.filter((p) => p.split(path.sep).includes("blobs"));
    assert.ok(blobs.length >= names.length, `blobs: ${blobs.join(", ")}`);
    for (const p of blobs) assert.match(path.basename(p), /^[A-Za-z0-9_-]{16,64}$/, `a blob named ${p}`);
  });

  it("hostile job ids on every id route: 400 H0001 or 404 H0004, never a file or a 5xx", async () => {
    const { body } = await submit(sori.url, token, JFK, {});
    const real = String(body.id);
    const ids = [
      "../../etc/passwd",
      "..%2f..%2fetc%2fpasswd",
      "%2e%2e",
      "%2e%2e%2f%2e%2e%2fsori.db",
      "..",
      ".",
      "%00",
      `${real}%00`,
      `${real}%00.json`,
      "%0d%0aX-Injected:%201",
      "%1b%5b31m",
      "a%20b",
      "%ff%fe",
      "%e2%80%ae",
      "%",
      "%zz",
      "a".repeat(65),
      "a".repeat(199),
      "a".repeat(5000),
      "'%20OR%20'1'='1",
      "%27%3B%20DROP%20TABLE%20jobs%3B--",
      "$%7Bjndi:x%7D",
    ];
    for (const id of ids) {
      for (const [method, suffix] of [
        ["GET", ""],
        ["GET", "?result=refined"],
        ["GET", "/export"],
        ["DELETE", ""],
      ] as const) {
        const pathPart = suffix.startsWith("?") ? `/v1/transcribe/${id}${suffix}` : `/v1/transcribe/${id}${suffix}`;
        const r = await rawRequest(sori.url, method, pathPart, token);
        assert.ok([400, 404].includes(r.status), `${method} ${pathPart}: ${r.status} ${r.text.slice(0, 200)}`);
        assert.ok(["H0001", "H0004"].includes(codeOf(r.text) ?? ""), `${method} ${pathPart}: ${r.text.slice(0, 200)}`);
      }
    }
    // The console serves only the files it listed at start, by exact name.
    for (const name of [
      "..%2f..%2fpackage.json",
      "%2e%2e%2f%2e%2e%2fsrc%2fconfig.ts",
      "..",
      "index.html%00.js",
      "%2fetc%2fpasswd",
    ]) {
      const r = await rawRequest(sori.url, "GET", `/console/${name}`, token);
      assert.equal(r.status, 404, `/console/${name}: ${r.text.slice(0, 200)}`);
      assert.equal(codeOf(r.text), "H0004");
    }
    // The real job is untouched by all of that.
    const r = await rawRequest(sori.url, "GET", `/v1/transcribe/${real}`, token);
    assert.equal(r.status, 200, r.text);
  });
});

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
