// GET /v1/transcribe:streaming refuses bad input with a clear error and close code, and nothing a client does
// ends the host or another session (docs/streaming.md, "Errors"). The engine runs but decodes no speech here.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { loadSigningKey, tokenIssuer } from "../../src/auth/tokens.js";
import { authenticate } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";
import { connectStream, type Refusal } from "../helpers/streamSocket.js";

const QUERY = "sample_rate=8000&encoding=LINEAR16&model_name=sommers_ko&domain=CALL&epd_time=0.5";

interface Outcome {
  messages: unknown[];
  code: number;
  reason: string;
}

describe("streaming: refused input", { timeout: 180_000 }, () => {
  let sori: SoriProcess;
  let ws: string;
  let token: string;
  let clientId: string;

  before(async () => {
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_STREAM_SESSIONS: "1",
      SORI_STREAM_IDLE_S: "1.5",
      SORI_STREAM_MAX_S: "4",
      SORI_STREAM_MAX_FRAME_BYTES: "4096",
    };
    const client = createClient(env);
    clientId = client.client_id;
    sori = await startSori("serve", env);
    ws = sori.url.replace("http://", "ws://");
    token = await authenticate(sori.url, client.client_id, client.client_secret);
  });
  after(() => sori?.stop());

  /** Opens a session; resolves with the refusal when the handshake is refused. */
  function connect(query = QUERY, auth: string | null = `bearer ${token}`): Promise<WebSocket | Refusal> {
    return connectStream(ws, query, auth);
  }

  function outcome(socket: WebSocket): Promise<Outcome> {
    const messages: unknown[] = [];
    socket.on("message", (data) => messages.push(JSON.parse(data.toString())));
    return new Promise((resolve) =>
      socket.once("close", (code, reason) => resolve({ messages, code, reason: reason.toString() })),
    );
  }

  async function session(query = QUERY): Promise<WebSocket> {
    const s = await connect(query);
    assert.ok(s instanceof WebSocket, JSON.stringify(s));
    return s;
  }

  async function refused(query: string, auth?: string | null): Promise<Refusal> {
    const r = await connect(query, auth);
    assert.ok(!(r instanceof WebSocket), "the handshake was accepted");
    return r;
  }

  it("refuses a missing or invalid token with 401 H0002 before the upgrade", async () => {
    assert.equal((await refused(QUERY, null)).body.code, "H0002");
    const bad = await refused(QUERY, "bearer not.a.token");
    assert.deepEqual([bad.status, bad.body.code], [401, "H0002"]);
  });

  it("takes the scheme in any case (the clients send `bearer` and `Bearer`)", async () => {
    for (const scheme of ["bearer", "Bearer", "BEARER"]) {
      const s = await connect(QUERY, `${scheme} ${token}`);
      assert.ok(s instanceof WebSocket);
      const done = outcome(s);
      s.send("EOS");
      assert.equal((await done).code, 1000);
    }
  });

  it("refuses a wrong sample_rate, an unknown encoding or model and bad keywords with 400 H0001 naming the field", async () => {
    const cases: [string, string][] = [
      ["sample_rate=4000&encoding=LINEAR16", "sample_rate"],
      ["sample_rate=96000", "sample_rate"],
      ["encoding=LINEAR16", "sample_rate"], // required
      ["sample_rate=8000&encoding=FLAC", "encoding"],
      ["sample_rate=8000&model_name=nova", "model_name"],
      ["sample_rate=8000&epd_time=fast", "epd_time"],
      ["sample_rate=8000&use_itn=yes", "use_itn"],
      ["sample_rate=8000&keywords=%EC%82%BC%EA%B3%84%ED%83%95:9", "keywords"],
      [`sample_rate=8000&keywords=${"a".repeat(21)}`, "keywords"],
    ];
    for (const [query, field] of cases) {
      const r = await refused(query);
      assert.equal(r.status, 400, query);
      assert.equal(r.body.code, "H0001", query);
      assert.match(r.body.msg, new RegExp(field), query);
    }
  });

  it("refuses a session beyond SORI_STREAM_SESSIONS with 429 A0002, and takes one again once a place is free", async () => {
    const first = await session();
    const r = await refused(QUERY);
    assert.deepEqual([r.status, r.body.code], [429, "A0002"]);
    const done = outcome(first);
    first.send("EOS");
    assert.equal((await done).code, 1000);
    const again = await session();
    const closed = outcome(again);
    again.send("EOS");
    assert.equal((await closed).code, 1000);
  });

  it("ends a session on a text frame that is not EOS: an error answer, then close 1003", async () => {
    const s = await session();
    const done = outcome(s);
    s.send("hello");
    const o = await done;
    assert.equal(o.code, 1003);
    assert.deepEqual(Object.keys((o.messages[0] as { error: object }).error), ["code", "msg"]);
  });

  it("takes pipecat's Finalize text frame", async () => {
    const s = await session();
    const done = outcome(s);
    s.send(Buffer.alloc(1600));
    s.send(JSON.stringify({ type: "Finalize" }));
    s.send("EOS");
    assert.equal((await done).code, 1000);
  });

  it("closes 1009 on a frame over SORI_STREAM_MAX_FRAME_BYTES and 1007 on LINEAR16 with an odd byte count", async () => {
    const big = await session();
    const bigDone = outcome(big);
    big.send(Buffer.alloc(8192));
    assert.equal((await bigDone).code, 1009);
    const odd = await session();
    const oddDone = outcome(odd);
    odd.send(Buffer.alloc(801));
    const o = await oddDone;
    assert.equal(o.code, 1007);
    assert.match(JSON.stringify(o.messages), /16-bit/);
  });

  it("closes 4000 when no audio comes for SORI_STREAM_IDLE_S", async () => {
    const s = await session();
    const o = await outcome(s);
    assert.equal(o.code, 4000);
    assert.match(o.reason, /no audio/);
  });

  it("closes 4001 at SORI_STREAM_MAX_S however much audio keeps coming", async () => {
    const s = await session("sample_rate=8000&encoding=MULAW");
    const done = outcome(s);
    const tick = setInterval(() => s.readyState === WebSocket.OPEN && s.send(Buffer.alloc(800, 0xff)), 100);
    const o = await done;
    clearInterval(tick);
    assert.equal(o.code, 4001);
  });

  it("closes 1008 when the token it was opened with expires", async () => {
    // A token of the server's own key that expires 2 s from now (the service's TTL is at least 60 s).
    const short = await tokenIssuer(loadSigningKey(sori.dataDir), 60).issue(clientId, Date.now() - 58_000);
    const s = await connect(QUERY, `Bearer ${short.access_token}`);
    assert.ok(s instanceof WebSocket);
    const done = outcome(s);
    const tick = setInterval(() => s.readyState === WebSocket.OPEN && s.send(Buffer.alloc(1600)), 100);
    const o = await done;
    clearInterval(tick);
    assert.equal(o.code, 1008);
    assert.match(JSON.stringify(o.messages), /H0002/);
  });

  it("is still serving after all of that", async () => {
    const health = await fetch(`${sori.url}/healthz`);
    assert.equal(health.status, 200);
    const s = await session();
    const done = outcome(s);
    s.send(Buffer.alloc(1600));
    s.send("EOS");
    assert.deepEqual(await done, { messages: [], code: 1000, reason: "end of stream" });
  });
});
