// A known path asked with a method it lacks answers 405 with `Allow` (RFC 9110 15.5.6); an unknown path 404; both in
// the spec's {"code","msg"} shape (src/api/methodNotAllowed.ts). schemathesis's ST204 check asks the same of every
// path in /openapi.json (test/security/schemathesis.test.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { inProcessApp } from "./inProcess.js";

describe("405 Method Not Allowed", () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  before(async () => ({ app, close } = await inProcessApp()));
  after(() => close());

  const cases: [string, string, string][] = [
    ["TRACE", "/v1/transcribe", "GET, HEAD, POST"],
    ["PUT", "/v1/transcribe/abc", "DELETE, GET, HEAD"],
    ["POST", "/v1/transcribe/abc?result=refined", "DELETE, GET, HEAD"],
    ["DELETE", "/healthz", "GET, HEAD"],
    ["GET", "/v1/authenticate", "POST"],
    // A method Fastify would otherwise parse a body for: refused before any parsing (was 400 for no content type).
    ["QUERY", "/v1/transcribe/abc/export", "GET, HEAD"],
  ];
  for (const [method, url, allow] of cases) {
    it(`${method} ${url}: 405, Allow: ${allow}`, async () => {
      const r = await app.inject({ method: method as "GET", url });
      assert.equal(r.statusCode, 405, r.body);
      assert.equal(r.headers.allow, allow);
      assert.equal(r.json().code, "H0004");
      assert.match(r.json().msg, new RegExp(`method ${method} not allowed`));
    });
  }

  it("an unknown path stays 404 H0004, whatever the method", async () => {
    for (const method of ["GET", "POST", "TRACE"] as const) {
      const r = await app.inject({ method, url: "/v1/nothing" });
      assert.equal(r.statusCode, 404, r.body);
      assert.equal(r.headers.allow, undefined);
      assert.deepEqual(r.json(), { code: "H0004", msg: "no such endpoint" });
    }
  });
});
