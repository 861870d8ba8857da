// An upload refused before its body is read (401 for a bad token, 413 for a declared size over the limit, 429 for a
// client at its concurrency bound) is answered so that a client that writes its whole body before it reads still
// reads the answer: the server reads and drops the rest (src/api/lingeringClose.ts). The client is Python's urllib,
// which also asks for `Connection: close` (the case Node closed at once). test/image/check.ts runs the same client
// through the container's published port.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { authenticate } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, tempDataDir } from "../helpers/server.js";
import { MB, writeFirst } from "../helpers/writeFirst.js";

describe("early refusals reach a client that writes its whole body first", () => {
  let sori: SoriProcess;
  let token: string;

  before(async () => {
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_WORKERS: "0",
      SORI_PORT: "0",
      SORI_MAX_FILE_BYTES: String(4 * 1024 * 1024),
    };
    const c = createClient(env, ["--max-concurrent", "0"]);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(() => sori.stop());

  for (const bytes of [MB, 20 * MB]) {
    it(`401 H0002 for a bad token on a ${bytes / MB} MB upload, three times in a row`, () => {
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(writeFirst(sori.url, bytes), {
          status: 401,
          body: { code: "H0002", msg: "invalid or expired token" },
        });
      }
    });
  }

  it("413 H0005 for a 20 MB upload over a 4 MiB limit", () => {
    const r = writeFirst(sori.url, 20 * MB, token);
    assert.equal(r.status, 413, JSON.stringify(r));
    assert.equal(r.body?.code, "H0005");
  });

  it("429 A0002 for a 3 MB upload (under the size limit) by a client at its concurrency bound", () => {
    const r = writeFirst(sori.url, 3 * MB, token);
    assert.equal(r.status, 429, JSON.stringify(r));
    assert.equal(r.body?.code, "A0002");
  });
});
