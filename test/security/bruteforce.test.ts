// Guessing secrets on POST /v1/authenticate: one address is throttled (429 A0003, docs/errors.md) after the burst,
// before any secret is checked, while clients at other addresses still authenticate. The loopback network has a
// whole /8, so 127.0.0.2 and 127.0.0.3 stand for two machines talking to a server on 127.0.0.1.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";

const BURST = 5;

describe("brute force on /v1/authenticate", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let alice: { client_id: string; client_secret: string };
  let bob: { client_id: string; client_secret: string };

  /** One attempt from `from` (a local source address), as a form post. */
  function attempt(from: string, id: string, secret: string): Promise<{ status: number; body: any; ms: number }> {
    const u = new URL(sori.url);
    const payload = new URLSearchParams({ client_id: id, client_secret: secret }).toString();
    const t0 = Date.now();
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: "/v1/authenticate",
          method: "POST",
          localAddress: from,
          agent: false,
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            "content-length": Buffer.byteLength(payload),
          },
        },
        (res) => {
          let text = "";
          res
            .setEncoding("utf8")
            .on("data", (d) => (text += d))
            .on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), ms: Date.now() - t0 }));
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  before(async () => {
    // A slow refill, so the test's own pace cannot earn the attacker new attempts.
    env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_AUTH_RPS: "0.05",
      SORI_AUTH_BURST: String(BURST),
    };
    alice = createClient(env);
    bob = createClient(env);
    sori = await startSori("serve", env);
  });
  after(async () => {
    await sori.stop();
    fs.rmSync(env.SORI_DATA_DIR!, { recursive: true, force: true });
  });

  it("wrong secrets from one address: 401 H0002 for the burst, then 429 A0003, even for the right secret", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await attempt("127.0.0.2", alice.client_id, `guess-${i}`);
      statuses.push(r.status);
      assert.deepEqual(Object.keys(r.body).sort(), ["code", "msg"]);
      assert.equal(r.body.code, r.status === 401 ? "H0002" : "A0003");
    }
    assert.deepEqual(statuses.slice(0, BURST), Array(BURST).fill(401), statuses.join());
    assert.deepEqual(statuses.slice(BURST), Array(40 - BURST).fill(429), statuses.join());
    // Once throttled the address learns nothing, whatever it sends.
    const right = await attempt("127.0.0.2", alice.client_id, alice.client_secret);
    assert.equal(right.status, 429);
  });

  it("other clients, at other addresses, are not locked out by the attacker", async () => {
    for (const [from, c] of [
      ["127.0.0.3", bob],
      ["127.0.0.3", alice],
      ["127.0.0.1", bob],
    ] as const) {
      const r = await attempt(from, c.client_id, c.client_secret);
      assert.equal(r.status, 200, `${from} ${JSON.stringify(r.body)}`);
      assert.equal(typeof r.body.access_token, "string");
    }
  });

  it("the throttle answers before the secret is checked: a 429 costs less than a checked guess", async () => {
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const checked: number[] = [];
    for (let i = 0; i < BURST; i++) checked.push((await attempt("127.0.0.4", alice.client_id, `guess-${i}`)).ms);
    const throttled: number[] = [];
    for (let i = 0; i < 10; i++) throttled.push((await attempt("127.0.0.2", alice.client_id, `guess-${i}`)).ms);
    // A checked guess runs scrypt (src/auth/secrets.ts); a throttled one must not.
    assert.ok(median(throttled) < median(checked), `throttled ${throttled.join()} ms vs checked ${checked.join()} ms`);
  });
});
