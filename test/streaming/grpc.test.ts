// RTZR's gRPC streaming service (docs/streaming.md, "gRPC") over TLS: the Python tutorial's client
// (test/streaming/rtzr_grpc.py, its pb2 modules generated from proto/vito-stt-client.proto) transcribes an 8 kHz
// copy of a shared clip at real-time pace, and each refusal ends the call with its gRPC status and the spec's code.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { authenticate } from "../helpers/api.js";
import { manifest, normalizedCer } from "../helpers/cer.js";
import { eventually } from "../helpers/eventually.js";
import { freePort } from "../helpers/pgCluster.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";
import { runDriver, STREAM_PYTHON } from "./driver.js";
import { phoneCopy } from "./phoneCopy.js";

const CLIP = "ko/deeply_anechoic_sub100120a00053.wav";

/** A self-signed certificate for localhost, as a deployment's would be signed by its CA. */
function selfSigned(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, "cert.pem");
  const key = path.join(dir, "key.pem");
  const r = spawnSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"].concat([
      "-addext",
      "subjectAltName=DNS:localhost",
      "-keyout",
      key,
      "-out",
      cert,
    ]),
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
  return { cert, key };
}

interface Line {
  kind: "interim" | "final" | "done" | "error";
  text?: string;
  status?: string;
  details?: string;
}

function tutorialClient(
  apiBase: string,
  target: string,
  cert: string,
  raw: string,
  creds: { id: string; secret: string },
) {
  return runDriver<Line>("rtzr_grpc.py", [apiBase, target, cert, raw, "8000"], creds);
}

type Decode = grpc.ClientDuplexStream<object, { results: { is_final: boolean }[] }>;

const present = fs.existsSync(STREAM_PYTHON);

describe("streaming over gRPC (RTZR's OnlineDecoder)", { timeout: 240_000 }, () => {
  let sori: SoriProcess;
  let creds: { id: string; secret: string };
  let target: string;
  let tls: { cert: string; key: string };
  let stub: grpc.Client & { Decode(md: grpc.Metadata): Decode };
  let token: string;
  let quotaToken: string; // a client whose usage quota is 1 s of audio

  before(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-grpc-"));
    tls = selfSigned(dir);
    const port = await freePort();
    target = `localhost:${port}`;
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_STREAM_SESSIONS: "1",
      SORI_STREAM_GRPC_PORT: String(port),
      SORI_STREAM_GRPC_TLS_CERT: tls.cert,
      SORI_STREAM_GRPC_TLS_KEY: tls.key,
    };
    const c = createClient(env);
    creds = { id: c.client_id, secret: c.client_secret };
    const q = createClient(env, ["--quota-hours", String(1 / 3600)]);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, creds.id, creds.secret);
    quotaToken = await authenticate(sori.url, q.client_id, q.client_secret);
    const def = protoLoader.loadSync(path.join(ROOT, "proto", "vito-stt-client.proto"), { keepCase: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      online_decoder: { OnlineDecoder: new (t: string, c: grpc.ChannelCredentials) => typeof stub };
    };
    stub = new pkg.online_decoder.OnlineDecoder(target, grpc.credentials.createSsl(fs.readFileSync(tls.cert)));
  });
  after(() => {
    stub?.close();
    return sori?.stop();
  });

  /** Sends `requests`, half-closes, and returns how the call ended. */
  async function call(auth: string | null, requests: object[], keepOpen = false) {
    const md = new grpc.Metadata();
    if (auth) md.set("authorization", auth);
    const c = stub.Decode(md);
    const results: unknown[] = [];
    const ended = new Promise<{ code: grpc.status; details: string }>((resolve) => {
      c.on("data", (r) => results.push(r));
      c.on("error", (e: grpc.ServiceError) => resolve({ code: e.code, details: e.details }));
      c.on("status", (s: grpc.StatusObject) => s.code === grpc.status.OK && resolve(s));
    });
    for (const r of requests) c.write(r);
    if (!keepOpen) c.end();
    return { call: c, ended, results };
  }
  const config = (over: object = {}) => ({ streaming_config: { sample_rate: 8000, encoding: "LINEAR16", ...over } });

  it(
    "the Python tutorial's client over TLS: an 8 kHz sentence at real-time pace gives a final close to the reference",
    { skip: present ? false : "no .venv-stream (make .venv-stream/.installed-v2)" },
    async () => {
      const lines = await tutorialClient(sori.url, target, tls.cert, phoneCopy(path.join(TESTDATA, CLIP)), creds);
      assert.equal(lines.at(-1)?.kind, "done", JSON.stringify(lines));
      const finals = lines.filter((l) => l.kind === "final");
      assert.equal(finals.length, 1, JSON.stringify(lines));
      const ref = manifest(TESTDATA).get(CLIP)!;
      assert.ok(normalizedCer(finals[0]!.text ?? "", ref) <= 0.3, `${finals[0]!.text} | ${ref}`);
    },
  );

  it("refuses a call without a valid token: UNAUTHENTICATED, H0002", async () => {
    for (const auth of [null, "Bearer not-a-token", `Basic ${token}`]) {
      const { ended } = await call(auth, [config()]);
      const s = await ended;
      assert.equal(s.code, grpc.status.UNAUTHENTICATED, `${auth}: ${s.details}`);
      assert.match(s.details, /^H0002: /u);
    }
  });

  it("refuses a bad config and audio before the config: INVALID_ARGUMENT, H0001 naming the field", async () => {
    const cases: [object[], RegExp][] = [
      [[config({ sample_rate: 4000 })], /^H0001: sample_rate: must be 8000 to 48000/u],
      [[config({ encoding: "FLAC" })], /^H0001: encoding: must be LINEAR16, MULAW or ALAW/u],
      [[{ audio_content: Buffer.alloc(1600) }], /^H0001: the first message must be streaming_config/u],
      [[config(), config()], /^H0001: streaming_config may be sent only once/u],
      [[config(), { audio_content: Buffer.alloc(1601) }], /^H0001: LINEAR16 audio must be whole 16-bit samples/u],
      [[], /^H0001: the stream ended before streaming_config/u],
    ];
    for (const [requests, details] of cases) {
      const s = await (await call(`Bearer ${token}`, requests)).ended;
      assert.equal(s.code, grpc.status.INVALID_ARGUMENT, s.details);
      assert.match(s.details, details);
    }
  });

  it("refuses a session beyond the host's bound: RESOURCE_EXHAUSTED, A0002; the open one ends normally", async () => {
    const first = await call(`Bearer ${token}`, [config()], true);
    first.call.write({ audio_content: Buffer.alloc(1600) });
    await new Promise((r) => setTimeout(r, 500)); // the first session is open
    const second = await (await call(`Bearer ${token}`, [config()])).ended;
    assert.equal(second.code, grpc.status.RESOURCE_EXHAUSTED, second.details);
    assert.match(second.details, /^A0002: /u);
    first.call.end();
    assert.equal((await first.ended).code, grpc.status.OK);
  });

  it("ends a session at the client's usage quota, then refuses its calls: RESOURCE_EXHAUSTED, A0001", async () => {
    const over = await call(`Bearer ${quotaToken}`, [config(), { audio_content: Buffer.alloc(32_000) }], true);
    const s = await over.ended; // 2 s of 8 kHz LINEAR16 against 1 s left
    assert.equal(s.code, grpc.status.RESOURCE_EXHAUSTED, s.details);
    assert.match(s.details, /^A0001: /u);
    await eventually(async () => {
      const again = await (await call(`Bearer ${quotaToken}`, [config()])).ended; // usage is written as a session ends
      assert.equal(again.code, grpc.status.RESOURCE_EXHAUSTED, again.details);
      assert.match(again.details, /^A0001: audio usage quota/u);
    });
  });
});
