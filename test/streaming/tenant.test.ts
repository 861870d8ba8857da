// A client's own limits on streaming (docs/streaming.md, "Limits and errors"): its `max_concurrent` bounds the
// sessions it has open on a host, apart from the host's bound, and its usage quota counts streamed audio: refused
// with 429 A0001 once used up, and a session closes 4002 when it reaches what is left. The engine decodes silence.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { authenticate } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";
import { connectStream, type Refusal } from "../helpers/streamSocket.js";

const QUERY = "sample_rate=8000&encoding=MULAW&model_name=sommers_ko&domain=CALL";
const SECOND = Buffer.alloc(8000, 0xff); // 1 s of MULAW silence at 8 kHz

describe("streaming: a client's own limits", { timeout: 180_000 }, () => {
  let sori: SoriProcess;
  const tokens: Record<"one" | "other" | "quota", string> = { one: "", other: "", quota: "" };

  before(async () => {
    const env = { SORI_DATA_DIR: tempDataDir(), SORI_WORKERS: "0", SORI_PORT: "0", SORI_STREAM_SESSIONS: "4" };
    const clients = {
      one: createClient(env, ["--max-concurrent", "1"]),
      other: createClient(env),
      quota: createClient(env, ["--quota-hours", String(3 / 3600)]), // 3 s of audio
    };
    sori = await startSori("serve", env);
    for (const k of ["one", "other", "quota"] as const) {
      tokens[k] = await authenticate(sori.url, clients[k].client_id, clients[k].client_secret);
    }
  });
  after(() => sori?.stop());

  const connect = (token: string): Promise<WebSocket | Refusal> =>
    connectStream(sori.url.replace("http://", "ws://"), QUERY, `bearer ${token}`);
  async function session(token: string): Promise<WebSocket> {
    const s = await connect(token);
    assert.ok(s instanceof WebSocket, JSON.stringify(s));
    return s;
  }
  function closed(s: WebSocket): Promise<{ code: number; messages: unknown[] }> {
    const messages: unknown[] = [];
    s.on("message", (data) => messages.push(JSON.parse(data.toString())));
    return new Promise((resolve) => s.once("close", (code) => resolve({ code, messages })));
  }

  it("refuses a client's session beyond its max_concurrent with 429 A0002, while other clients get theirs", async () => {
    const first = await session(tokens.one);
    const r = await connect(tokens.one);
    assert.ok(!(r instanceof WebSocket));
    assert.deepEqual([r.status, r.body.code], [429, "A0002"]);
    assert.match(r.body.msg, /client/);
    const other = await session(tokens.other);
    for (const s of [first, other]) {
      const done = closed(s);
      s.send("EOS");
      assert.equal((await done).code, 1000);
    }
    const again = await session(tokens.one);
    const done = closed(again);
    again.send("EOS");
    assert.equal((await done).code, 1000);
  });

  it("counts streamed audio against the quota: a session closes 4002 at what is left, then 429 A0001", async () => {
    const first = await session(tokens.quota);
    let done = closed(first);
    first.send(SECOND);
    first.send(SECOND);
    first.send("EOS");
    assert.equal((await done).code, 1000); // 2 s of 3 used
    const second = await session(tokens.quota);
    done = closed(second);
    for (let i = 0; i < 4; i++) second.send(SECOND); // more than is left, even were the first not yet counted
    const o = await done;
    assert.equal(o.code, 4002);
    assert.deepEqual(o.messages, [{ error: { code: "A0001", msg: "the audio usage quota is used up" } }]);
    await eventually(async () => {
      // The session's usage is written as it ends; until then a connection may still be taken (and is closed).
      const r = await connect(tokens.quota);
      if (r instanceof WebSocket) r.close();
      assert.ok(!(r instanceof WebSocket));
      assert.deepEqual([r.status, r.body.code], [429, "A0001"]);
    });
  });
});
