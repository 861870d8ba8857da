// Property-based fuzzing (fast-check) of the two parsers that take raw client input: the config object and the
// multipart body. Properties: the answer is a spec error ({"code","msg"}, 4xx, a registry code) or an acceptance,
// never a 5xx, never a hang; the config parser itself only ever throws H0001 and never pollutes prototypes. The
// HTTP properties run against a real server without workers; the files sent are not audio, so a config that
// passes is answered H0010 (or H0003 for the Enterprise add-ons), which tells the two outcomes apart.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { toApiError } from "../../src/api/errorMapping.js";
import { InvalidInput } from "../../src/domain/errors.js";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import { ERROR_CODES, isApiError } from "../../src/errors.js";
import { authenticate } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, unthrottledApiEnv } from "../helpers/server.js";
import { rawPost } from "./raw.js";

const SEED = 20261121; // fixed for reproducible CI; fast-check prints the seed and path of any failure
const KEYS = [
  "model_name",
  "language",
  "language_candidates",
  "use_diarization",
  "diarization",
  "spk_count",
  "use_multi_channel",
  "use_itn",
  "use_paragraph_splitter",
  "paragraph_splitter",
  "max",
  "domain",
  "keywords",
  "use_refinement",
  "use_insight",
  "insight",
  "prompt",
  "callback_url",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
];
const VALUES = ["sommers", "whisper", "ko", "ja", "detect", "multi", "GENERAL", "CALL", "en", "zz"];

/** JSON values shaped like configs: known keys (and prototype-pollution keys) holding anything, nested deeply. */
const configLike: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<unknown>(null, true, false, 0, -1, 1, 1e308, -1e308, 2 ** 53 + 1, 0.5, "", "\u0000", "🎙️"),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(...VALUES),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.array(tie("value"), { maxLength: 5 }),
    tie("object"),
  ),
  object: fc.dictionary(
    fc.oneof(fc.constantFrom(...KEYS), fc.string({ unit: "binary", maxLength: 12 })),
    tie("value"),
    { maxKeys: 6 },
  ),
})).object;

/** Text for the config part: JSON of a config-like object, any JSON, deep nesting, or not JSON at all. */
const configText: fc.Arbitrary<string> = fc.oneof(
  configLike.map((v) => JSON.stringify(v)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.nat({ max: 5000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
  fc.nat({ max: 5000 }).map((n) => '{"a":'.repeat(n) + "1" + "}".repeat(n)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"diarization":{"__proto__":{"spk_count":-1}}}',
  ),
);

describe("fuzzing the config parser", () => {
  it("parseJobConfig returns a config or throws 400 H0001, and never pollutes a prototype", () => {
    fc.assert(
      fc.property(configText, (text) => {
        try {
          const c = parseJobConfig(text);
          assert.ok(["sommers", "whisper"].includes(c.model_name));
        } catch (err) {
          assert.ok(err instanceof InvalidInput, `not an InvalidInput: ${String(err)}`);
          assert.equal(toApiError(err).code, "H0001");
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });
});

describe("fuzzing over HTTP", () => {
  let sori: SoriProcess;
  let env: NodeJS.ProcessEnv;
  let token: string;

  before(async () => {
    env = unthrottledApiEnv({ SORI_MAX_FILE_BYTES: String(1024 * 1024) });
    const c = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(async () => {
    await sori.stop();
    fs.rmSync(env.SORI_DATA_DIR!, { recursive: true, force: true });
  });

  it("a fuzzed config at submit: H0001 exactly when the parser refuses it, else H0010/H0003; never 5xx", async (t) => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(configText, async (text) => {
        let expected: string[];
        try {
          const c = parseJobConfig(text);
          // A callback_url that parses can still be refused by the address check (H0001) before the file is looked at.
          expected =
            c.callback_url !== undefined
              ? ["H0001", "H0003", "H0010"]
              : c.use_refinement || c.use_insight
                ? ["H0003"]
                : ["H0010"];
        } catch {
          expected = ["H0001"];
        }
        const form = new FormData();
        form.append("config", text);
        form.append("file", new Blob([Buffer.from("not audio at all, just text ".repeat(8))]), "x.wav");
        const r = await fetch(`${sori.url}/v1/transcribe`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        const body = (await r.json()) as { code: string; msg: string };
        assert.ok(r.status < 500, `${r.status} ${JSON.stringify(body)} for ${text.slice(0, 200)}`);
        assert.ok(
          expected.includes(body.code),
          `${body.code} (expected ${expected.join("/")}) for ${text.slice(0, 200)}`,
        );
        assert.equal(r.status, ERROR_CODES[body.code as keyof typeof ERROR_CODES].status);
        seen.set(`${r.status} ${body.code}`, (seen.get(`${r.status} ${body.code}`) ?? 0) + 1);
      }),
      { seed: SEED, numRuns: 150 },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`);
  });

  it("fuzzed multipart bodies on every multipart route: a spec error or acceptance within 5 s, never 5xx", async (t) => {
    const seen = new Map<string, number>();
    const part = fc.record({
      name: fc.oneof(
        fc.constantFrom("config", "file", "client_id", "client_secret", "model", ""),
        fc.string({ unit: "binary", maxLength: 20 }),
      ),
      filename: fc.option(fc.oneof(fc.constant("../../etc/passwd"), fc.string({ unit: "binary", maxLength: 30 })), {
        nil: undefined,
      }),
      extraHeaders: fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,20}$/), fc.string({ maxLength: 60 })), {
        maxLength: 3,
      }),
      content: fc.oneof(
        fc.constant("{}"),
        fc.string({ maxLength: 100 }),
        fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a).toString("latin1")),
      ),
    });
    const request = fc.record({
      route: fc.constantFrom("/v1/transcribe", "/v1/authenticate", "/v1/audio/transcriptions"),
      boundary: fc.oneof(
        fc.constant("b0undary"),
        fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/),
        fc.string({ maxLength: 90 }),
      ),
      // The boundary the body really uses: usually the declared one, sometimes another, sometimes none.
      bodyBoundary: fc.option(fc.stringMatching(/^[A-Za-z0-9]{1,20}$/), { nil: undefined, freq: 4 }),
      contentType: fc.constantFrom("declared", "no-boundary", "quoted", "garbage"),
      parts: fc.array(part, { maxLength: 25 }),
      closed: fc.boolean(),
      truncateAt: fc.option(fc.nat(), { nil: undefined }),
      lineEnd: fc.constantFrom("\r\n", "\n"),
    });
    await fc.assert(
      fc.asyncProperty(request, async (q) => {
        const b = q.bodyBoundary ?? q.boundary;
        const eol = q.lineEnd;
        let body = "";
        for (const p of q.parts) {
          body += `--${b}${eol}content-disposition: form-data; name="${p.name}"${p.filename === undefined ? "" : `; filename="${p.filename}"`}${eol}`;
          for (const [k, v] of p.extraHeaders) body += `${k}: ${v}${eol}`;
          body += `${eol}${p.content}${eol}`;
        }
        if (q.closed) body += `--${b}--${eol}`;
        let bytes = Buffer.from(body, "latin1");
        if (q.truncateAt !== undefined && bytes.length > 0) bytes = bytes.subarray(0, q.truncateAt % bytes.length);
        const contentType = {
          declared: `multipart/form-data; boundary=${q.boundary}`,
          "no-boundary": "multipart/form-data",
          quoted: `multipart/form-data; boundary="${q.boundary}"`,
          garbage: `multipart/${q.boundary}`,
        }[q.contentType];
        const r = await rawPost(
          `${sori.url}${q.route}`,
          { authorization: `Bearer ${token}`, "content-type": contentType },
          bytes,
          5000,
        );
        const what = `${q.route} ${contentType} ${JSON.stringify(body.slice(0, 300))}`;
        assert.ok(r.status < 500, `${r.status} ${r.text} for ${what}`);
        const parsed = JSON.parse(r.text) as { code?: string; error?: { code?: string } };
        const code = q.route === "/v1/audio/transcriptions" ? parsed.error?.code : parsed.code;
        seen.set(`${q.route} ${r.status} ${code}`, (seen.get(`${q.route} ${r.status} ${code}`) ?? 0) + 1);
        assert.ok(code && code in ERROR_CODES, `no spec code in ${r.text} for ${what}`);
      }),
      { seed: SEED, numRuns: 250 },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`);
    // The server is still answering normally.
    assert.equal((await fetch(`${sori.url}/healthz`)).status, 200);
    assert.deepEqual(
      sori.logs.filter((l) => l.includes('"unhandled error"')),
      [],
    );
  });
});
