// GET /openapi.json: served without auth, describes every route Fastify has (and nothing more), derives the
// config object from the zod schema, and is a valid OpenAPI 3.1 document (openapi-spec-validator, from the
// engine's [dev] extra, is the judge).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { PII_NEEDS_USE_FORM } from "../../src/api/configRules.js";
import { ConfigSchema } from "../../src/domain/jobConfig.js";
import { assertDocumented } from "../helpers/documented.js";
import { ROOT } from "../helpers/server.js";
import { fastifyRoutes, inProcessApp } from "./inProcess.js";

const PYTHON = path.join(ROOT, ".venv", "bin", "python");

describe("GET /openapi.json", () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let doc: {
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, any> };
  };

  before(async () => {
    ({ app, close } = await inProcessApp());
    const r = await app.inject({ method: "GET", url: "/openapi.json" });
    assert.equal(r.statusCode, 200, r.body);
    doc = r.json();
  });
  after(() => close());

  it("is served without a token, as OpenAPI 3.1", () => {
    assert.equal(doc.openapi, "3.1.0");
  });

  it("describes exactly the routes Fastify has registered", () => {
    const documented = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    const routes = fastifyRoutes(app);
    assert.ok(routes.length >= 10, routes.join("\n"));
    assert.deepEqual(documented, routes);
  });

  it("declares bearer auth on every /v1 route except authenticate, and a {code,msg} body for each error", () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops) as [string, any][]) {
        const needsToken = p.startsWith("/v1/") && p !== "/v1/authenticate";
        assert.equal(Boolean(op.security?.length), needsToken, `${method} ${p} security`);
        if (needsToken) assert.ok(op.responses["401"], `${method} ${p} lacks 401`);
        for (const [status, res] of Object.entries(op.responses) as [string, any][]) {
          // /readyz's 503 is a probe's answer, not a refused call.
          if (Number(status) < 400 || !res.content?.["application/json"] || p === "/readyz") continue;
          const r = res.content["application/json"].schema.$ref as string;
          assert.match(r, /#\/components\/schemas\/(Error|OpenAiError)$/, `${method} ${p} ${status}`);
        }
      }
    }
    assert.deepEqual(doc.components.schemas.Error.required, ["code", "msg"]);
  });

  it("takes the config object's fields from the zod schema (speaker_identification only where speakers are on)", () => {
    assert.deepEqual(
      Object.keys(doc.components.schemas.Config.properties).sort(),
      Object.keys(ConfigSchema.shape)
        .filter((k) => k !== "speaker_identification")
        .sort(),
    );
    assert.deepEqual(doc.components.schemas.Config.properties.domain.enum, ["GENERAL", "CALL"]);
  });

  it("says which media types each file part takes, and that the OpenAI route's pii_redaction needs use_pii_redaction", () => {
    const multipart = (p: string): any => (doc.paths[p]!.post as any).requestBody.content["multipart/form-data"];
    for (const p of ["/v1/transcribe", "/v1/audio/transcriptions", "/v1/speakers", "/v1/speakers/{id}/audio"]) {
      if (!doc.paths[p]) continue; // speakers only where the server enables them
      const types = String(multipart(p).encoding.file.contentType).split(/,\s*/);
      for (const t of ["audio/mp4", "audio/x-m4a", "audio/mpeg", "audio/amr", "audio/flac", "audio/wav"])
        assert.ok(types.includes(t), `${p}: ${types}`);
    }
    const form = multipart("/v1/audio/transcriptions").schema;
    assert.deepEqual(form.allOf, [PII_NEEDS_USE_FORM]);
    assert.deepEqual(PII_NEEDS_USE_FORM.dependentSchemas, {
      pii_redaction: { properties: { use_pii_redaction: { const: true } }, required: ["use_pii_redaction"] },
    });
  });

  it("describes Utterance with its words and spk_type (the read body as the spec gives it)", () => {
    const u = doc.components.schemas.Utterance;
    assert.deepEqual(u.required.sort(), ["duration", "lang", "msg", "spk", "spk_type", "start_at"]);
    assert.equal(u.properties.words.items.$ref, "#/components/schemas/Word");
    assert.equal(u.properties.spk_type.const, "NORMAL");
  });

  it("matches what the routes answer without a job (the HTTP tests check the rest through test/helpers/api.ts)", async () => {
    const answers: [string, string, Record<string, string>?][] = [
      ["GET", "/healthz"],
      ["GET", "/readyz"],
      ["GET", "/openapi.json"],
      ["GET", "/"],
      ["GET", "/console/nothing.js"],
      ["GET", "/v1/transcribe"],
      ["GET", "/v1/transcribe/abc"],
      ["GET", "/v1/transcribe/abc/export"],
      ["DELETE", "/v1/transcribe/abc"],
      ["GET", "/v1/callbacks/secret"],
      ["POST", "/v1/audio/transcriptions"],
      ["POST", "/v1/transcribe"],
      ["POST", "/v1/authenticate", { "content-type": "application/x-www-form-urlencoded" }],
    ];
    for (const [method, url, headers] of answers) {
      const r = await app.inject({
        method: method as "GET",
        url,
        headers,
        payload: method === "POST" ? "client_id=x" : undefined,
      });
      const media = String(r.headers["content-type"] ?? "").split(";")[0]!;
      const route = `${method} ${url.replace(/^\/v1\/transcribe\/abc/, "/v1/transcribe/{id}").replace(/^\/console\/.*/, "/console/{file}")}`;
      assertDocumented(route, r.statusCode, media === "application/json" ? r.json() : r.body, media);
    }
  });

  it("validates as OpenAPI 3.1 (openapi-spec-validator)", (t) => {
    if (!fs.existsSync(PYTHON)) return t.skip("no .venv: run make install");
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sori-oas-")), "openapi.json");
    fs.writeFileSync(file, JSON.stringify(doc));
    const r = spawnSync(PYTHON, ["-m", "openapi_spec_validator", "--schema", "3.1", file], { encoding: "utf8" });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });
});
