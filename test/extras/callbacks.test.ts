// Callbacks: a receiver started by the test gets a signed POST {id, status} when a real job becomes final,
// retried after a 5xx, never holding up the job; and the SSRF guard keeps loopback targets out unless the admin
// allows them.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { verifySignature } from "../../src/callbacks/sign.js";
import { isPrivateAddress } from "../../src/callbacks/ssrf.js";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { assertDocumented } from "../helpers/documented.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");
const WHISPER = { model_name: "whisper", language: "detect", language_candidates: ["en"] };

interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A callback receiver on loopback: records every request; `/flaky` fails once, `/hang` never answers. */
class Receiver {
  readonly got: Delivery[] = [];
  private server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const path = req.url ?? "";
      this.got.push({ path, headers: req.headers, body, at: Date.now() });
      if (path.startsWith("/hang")) return; // never answers
      const failFirst = path.startsWith("/flaky") && this.got.filter((d) => d.path === path).length === 1;
      res.writeHead(failFirst ? 503 : 204).end();
    });
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async waitFor(path: string, n = 1, timeoutMs = 60_000): Promise<Delivery[]> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const got = this.got.filter((d) => d.path === path);
      if (got.length >= n) return got;
      if (Date.now() > until) throw new Error(`${n} callback(s) to ${path} expected, got ${got.length}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe("callbacks (receiver on loopback, allowed by the admin switch)", () => {
  let sori: SoriProcess;
  let url: string;
  let token: string;
  let secret: string;
  const receiver = new Receiver();

  before(async () => {
    await receiver.start();
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_PORT: "0",
      SORI_WORKERS: "1",
      SORI_POLL_MS: "200",
      SORI_CALLBACK_ALLOW_PRIVATE: "1",
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c.client_id, c.client_secret);
    const r = await fetch(`${url}/v1/callbacks/secret`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await r.json()) as { secret: string };
    assertDocumented("GET /v1/callbacks/secret", r.status, body);
    secret = body.secret;
    assert.match(secret, /^scb_[A-Za-z0-9_-]{43}$/);
  });
  after(async () => {
    await sori.stop();
    await receiver.stop();
  });

  it("POSTs {id, status} signed with the client's secret when the job completes", async () => {
    const r = await submit(url, token, JFK, { ...WHISPER, callback_url: `${receiver.url}/done?x=1` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [d] = await receiver.waitFor("/done?x=1");
    assert.deepEqual(JSON.parse(d!.body), { id: r.body.id, status: "completed" });
    assert.equal(d!.headers["content-type"], "application/json");
    // The documented recipe: HMAC-SHA256 over "<t>.<body>", hex, in `t=...,v1=...`.
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(d!.headers["x-sori-signature"]));
    assert.ok(m, String(d!.headers["x-sori-signature"]));
    assert.equal(createHmac("sha256", secret).update(`${m[1]}.${d!.body}`).digest("hex"), m[2]);
    assert.ok(Math.abs(Number(m[1]) - Date.now() / 1000) < 60);
    assert.ok(verifySignature(secret, d!.body, String(d!.headers["x-sori-signature"])));
    assert.ok(!verifySignature(secret, d!.body.replace("completed", "failed"), String(d!.headers["x-sori-signature"])));
    assert.equal((await read(url, token, String(r.body.id))).body.status, "completed");
  });

  it("retries with backoff after a 5xx, with the same delivery id", async () => {
    const r = await submit(url, token, JFK, { ...WHISPER, callback_url: `${receiver.url}/flaky` });
    const [first, second] = await receiver.waitFor("/flaky", 2);
    assert.equal(first!.body, second!.body);
    assert.equal(JSON.parse(second!.body).id, r.body.id);
    assert.equal(first!.headers["x-sori-delivery"], second!.headers["x-sori-delivery"]);
    assert.deepEqual([first!.headers["x-sori-attempt"], second!.headers["x-sori-attempt"]], ["1", "2"]);
    assert.ok(second!.at - first!.at >= 900, `backoff of about 1 s: ${second!.at - first!.at} ms`);
  });

  it("reports a failed job, and a receiver that never answers does not hold the job up", async () => {
    const noise = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(4096, 0x55)]);
    const failed = await submit(url, token, new Blob([noise]), { callback_url: `${receiver.url}/failed` });
    if (failed.status === 200) {
      const [d] = await receiver.waitFor("/failed");
      assert.deepEqual(JSON.parse(d!.body), { id: failed.body.id, status: "failed" });
    }

    const r = await submit(url, token, JFK, { ...WHISPER, callback_url: `${receiver.url}/hang` });
    const id = String(r.body.id);
    const body = await waitFinal(url, token, id);
    assert.equal(body.status, "completed");
    await receiver.waitFor("/hang");
    // The callback is still waiting for its answer, and the next job runs all the same.
    const next = await submit(url, token, JFK, WHISPER);
    assert.equal((await waitFinal(url, token, String(next.body.id))).status, "completed");
  });

  it("400 H0001 for a callback_url that is not http(s)", async () => {
    for (const bad of ["ftp://example.com/x", "not a url", "file:///etc/passwd", 42]) {
      const r = await submit(url, token, JFK, { callback_url: bad });
      assert.equal(r.status, 400, String(bad));
      assert.equal(r.body.code, "H0001");
      assert.match(String(r.body.msg), /callback_url/);
    }
  });
});

describe("callbacks: the SSRF guard (default settings)", () => {
  let sori: SoriProcess;
  let url: string;
  let token: string;
  const receiver = new Receiver();

  before(async () => {
    await receiver.start();
    const env = { SORI_DATA_DIR: tempDataDir(), SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200" };
    const c = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c.client_id, c.client_secret);
  });
  after(async () => {
    await sori.stop();
    await receiver.stop();
  });

  it("refuses loopback and private addresses written in the URL at submit", async () => {
    const port = new URL(receiver.url).port;
    for (const target of [
      receiver.url,
      `http://localhost:${port}/`,
      `http://[::1]:${port}/`,
      "http://10.1.2.3/",
      "http://169.254.169.254/latest/meta-data",
      `http://[::ffff:127.0.0.1]:${port}/`,
    ]) {
      const r = await submit(url, token, JFK, { callback_url: target });
      assert.equal(r.status, 400, target);
      assert.equal(r.body.code, "H0001");
      assert.match(String(r.body.msg), /private/);
    }
  });

  it("refuses a name that resolves to a loopback address when sending; the job completes all the same", async (t) => {
    const name = os.hostname();
    const { address } = await import("node:dns").then((dns) => dns.promises.lookup(name));
    if (!isPrivateAddress(address)) return t.skip(`${name} resolves to ${address}, a public address`);
    const port = new URL(receiver.url).port;
    const r = await submit(url, token, JFK, { ...WHISPER, callback_url: `http://${name}:${port}/rebind` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await waitFinal(url, token, String(r.body.id))).status, "completed");
    const until = Date.now() + 5000;
    while (!sori.logs.some((l) => l.includes("callback given up")) && Date.now() < until)
      await new Promise((res) => setTimeout(res, 100));
    const line = sori.logs.find((l) => l.includes("callback given up"));
    assert.ok(line, "the refusal is logged");
    assert.match(line, /resolves to 127\./);
    assert.equal(receiver.got.length, 0, "the receiver never heard from sori");
  });

  it("classifies addresses", () => {
    for (const a of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "224.0.0.1",
      "nonsense",
    ]) {
      assert.equal(isPrivateAddress(a), true, a);
    }
    for (const a of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "172.32.0.1"])
      assert.equal(isPrivateAddress(a), false, a);
  });
});
