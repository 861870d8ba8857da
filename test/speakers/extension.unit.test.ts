// Known speakers are an extension, off by default (docs/speakers.md): off, /v1/speakers is not routed (404 H0004)
// and `speaker_identification` is ignored like any unknown config field; on, the routes are there and documented,
// and the field is checked.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import { fastifyRoutes, inProcessApp } from "../security/inProcess.js";

describe("known speakers as an extension", () => {
  it("off by default: no route, and the config field is ignored unread", async () => {
    const { app, close } = await inProcessApp();
    try {
      assert.ok(!fastifyRoutes(app).some((r) => r.includes("/v1/speakers")));
      const r = await app.inject({ method: "GET", url: "/v1/speakers" });
      assert.equal(r.statusCode, 404);
      assert.equal(r.json().code, "H0004");
      const doc = (await app.inject({ method: "GET", url: "/openapi.json" })).json();
      assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith("/v1/speakers")));
    } finally {
      await close();
    }
    const c = parseJobConfig(JSON.stringify({ speaker_identification: { speakers: [1, 2] } }));
    assert.equal(c.speaker_identification, undefined);
  });

  it("on (SORI_SPEAKERS): routed and documented, the field checked", async () => {
    const { app, close } = await inProcessApp({ SORI_SPEAKERS: "1" });
    try {
      const routes = fastifyRoutes(app).filter((r) => r.includes("/v1/speakers"));
      assert.deepEqual(routes, [
        "DELETE /v1/speakers/{id}",
        "GET /v1/speakers",
        "POST /v1/speakers",
        "POST /v1/speakers/{id}/audio",
      ]);
      const doc = (await app.inject({ method: "GET", url: "/openapi.json" })).json();
      for (const r of routes) {
        const [method, p] = r.split(" ") as [string, string];
        assert.ok(doc.paths[p]?.[method.toLowerCase()], r);
      }
      const r = await app.inject({ method: "GET", url: "/v1/speakers" });
      assert.equal(r.statusCode, 401);
      assert.equal(r.json().code, "H0002");
    } finally {
      await close();
    }
    const on = { speakers: true };
    const parse = (c: object) => parseJobConfig(JSON.stringify(c), on);
    assert.deepEqual(parse({ use_diarization: true, speaker_identification: {} }).speaker_identification, {
      speakers: [],
    });
    assert.throws(
      () => parse({ speaker_identification: { speakers: [] } }),
      /needs use_diarization or use_multi_channel/,
    );
    assert.throws(
      () => parse({ use_multi_channel: true, speaker_identification: { speakers: ["a/b"] } }),
      /speaker ids/,
    );
    assert.throws(
      () => parse({ use_diarization: true, speaker_identification: { speakers: Array(65).fill("a") } }),
      /at most 64/,
    );
  });
});
