// The docs cannot drift from the code: every error code of the registry (wire codes with their HTTP status,
// failed-job, refinement and engine codes) is in docs/errors.md, every field of the job config is in docs/api.md's
// config table with what it does, every SORI_* variable that src/config.ts reads is in docs/configuration.md, and
// the docs name no variable that nothing reads.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { z } from "zod";
import { ConfigSchema } from "../../src/domain/jobConfig.js";
import { ENGINE_ERROR_CODES, ERROR_CODES, JOB_FAILURE_CODES, REFINE_ERROR_CODES } from "../../src/errors.js";
import { escapeRegExp } from "../../src/text/regex.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const read = (rel: string): string => fs.readFileSync(path.join(ROOT, rel), "utf8");
const VAR = /\bSORI_[A-Z0-9_]*[A-Z0-9]\b/g;
const varsIn = (text: string): Set<string> => new Set(text.match(VAR) ?? []);

/** Variables the engine (Python) reads itself; the worker passes its environment through. */
function engineVars(): Set<string> {
  const dir = path.join(ROOT, "engine", "sori_engine");
  const out = new Set<string>();
  // Recursive: subpackages such as diarization/ read variables too.
  const files = fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((n) => n.endsWith(".py"));
  for (const f of files) {
    for (const v of varsIn(fs.readFileSync(path.join(dir, f), "utf8"))) out.add(v);
  }
  return out;
}

describe("docs/errors.md", () => {
  const doc = read("docs/errors.md");

  it("has a table row for every code of src/errors.ts, with its HTTP status", () => {
    const codes = Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[];
    assert.ok(codes.length >= 12, `only ${codes.length} codes in the registry`);
    for (const code of codes) {
      const row = new RegExp(`^\\|\\s*${escapeRegExp(code)}\\s*\\|\\s*${ERROR_CODES[code].status}\\s*\\|`, "m");
      assert.match(doc, row, `docs/errors.md lacks a row "| ${code} | ${ERROR_CODES[code].status} | ..."`);
    }
  });

  it("lists no code the registry does not have", () => {
    const documented = [...doc.matchAll(/^\|\s*([A-Z]\d{3,4})\s*\|\s*\d{3}\s*\|/gm)].map((m) => m[1]!);
    for (const code of documented)
      assert.ok(code in ERROR_CODES, `docs/errors.md lists ${code}, which src/errors.ts lacks`);
  });
});

describe("docs/errors.md: the codes beside the HTTP codes", () => {
  const doc = read("docs/errors.md");
  const section = (title: string): string => {
    const start = doc.indexOf(`## ${title}`);
    assert.ok(start >= 0, `docs/errors.md lacks the section "${title}"`);
    const end = doc.indexOf("\n## ", start + 1);
    return doc.slice(start, end < 0 ? undefined : end);
  };
  const rowFor = (_text: string, code: string): RegExp => new RegExp(`^\\|\\s*\`?${escapeRegExp(code)}\`?\\s*\\|`, "m");

  it("every failed-job code has a row in 'Errors of a failed job'", () => {
    for (const code of JOB_FAILURE_CODES) assert.match(section("Errors of a failed job"), rowFor("", code), code);
  });
  it("every refinement code has a row in 'Refinement errors'", () => {
    for (const code of REFINE_ERROR_CODES) assert.match(section("Refinement errors"), rowFor("", code), code);
  });
  it("every engine code has a row in 'Engine error codes', and every row is a code", () => {
    const s = section("Engine error codes");
    for (const code of ENGINE_ERROR_CODES) assert.match(s, rowFor("", code), code);
    const rows = [...s.matchAll(/^\|\s*`([a-z_]+)`\s*\|/gm)].map((m) => m[1]!);
    for (const code of rows)
      assert.ok(
        (ENGINE_ERROR_CODES as readonly string[]).includes(code),
        `docs/errors.md lists engine code ${code}, which src/errors.ts lacks`,
      );
  });
});

describe("docs/api.md: the config table", () => {
  const doc = read("docs/api.md");
  /** Every leaf field of the config schema, nested ones as `parent.child`. */
  const fields = (schema: z.ZodObject<z.ZodRawShape>, prefix = ""): string[] =>
    Object.entries(schema.shape).flatMap(([name, field]) => {
      let inner: unknown = field;
      // Unwrap .default() and .optional() to find a nested object.
      while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional)
        inner = (inner as z.ZodDefault<z.ZodTypeAny>).unwrap();
      const nested =
        inner instanceof z.ZodObject ? fields(inner as z.ZodObject<z.ZodRawShape>, `${prefix}${name}.`) : [];
      return nested.length > 0 ? nested : [`${prefix}${name}`];
    });

  it("has a row naming every config field, and no row says a field has no effect", () => {
    const names = fields(ConfigSchema);
    assert.ok(names.length >= 18, `only ${names.length} fields found`);
    const rows = doc.split("\n").filter((l) => l.startsWith("| `"));
    for (const name of names) {
      const row = rows.find((r) => r.split("|")[1]!.includes("`" + name + "`"));
      assert.ok(row, `docs/api.md's config table lacks \`${name}\``);
      assert.doesNotMatch(row, /no effect/i, `docs/api.md says ${name} has no effect`);
    }
  });
});

describe("docs/configuration.md", () => {
  const doc = read("docs/configuration.md");
  const configVars = varsIn(read("src/config.ts"));

  it("documents every SORI_* variable read in src/config.ts", () => {
    assert.ok(configVars.size >= 20, `found only ${configVars.size} variables in src/config.ts`);
    for (const v of configVars) assert.match(doc, new RegExp("`" + v + "`"), `docs/configuration.md lacks ${v}`);
  });

  it("no doc of ours names a SORI_* variable that neither src/config.ts, the engine nor the test harness reads", () => {
    // SORI_TESTDATA and SORI_TEST_PG_URL: read by the test harness; SORI_ST_REPORT by the contract check.
    const known = new Set([
      ...configVars,
      ...engineVars(),
      ...varsIn(read("test/helpers/server.ts")),
      ...varsIn(read("test/security/schemathesis.test.ts")),
      "SORI_TEST_PG_URL",
    ]);
    for (const file of [
      "README.md",
      "docs/api.md",
      "docs/configuration.md",
      "docs/errors.md",
      "docs/architecture.md",
    ]) {
      for (const v of varsIn(read(file))) assert.ok(known.has(v), `${file} names ${v}, which nothing reads`);
    }
  });
});
