// The docs cannot drift from the code: every wire error code (with its HTTP status) is in docs/errors.md, every
// SORI_* variable that src/config.ts reads is in docs/configuration.md, and the docs name no variable that nothing
// reads.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ERROR_CODES } from "../../src/errors.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const read = (rel: string): string => fs.readFileSync(path.join(ROOT, rel), "utf8");
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const VAR = /\bSORI_[A-Z0-9_]*[A-Z0-9]\b/g;
const varsIn = (text: string): Set<string> => new Set(text.match(VAR) ?? []);

/** Variables the engine (Python) reads itself; the worker passes its environment through. */
function engineVars(): Set<string> {
  const dir = path.join(ROOT, "engine", "sori_engine");
  const out = new Set<string>();
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".py"))) {
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
      const row = new RegExp(`^\\|\\s*${escape(code)}\\s*\\|\\s*${ERROR_CODES[code].status}\\s*\\|`, "m");
      assert.match(doc, row, `docs/errors.md lacks a row "| ${code} | ${ERROR_CODES[code].status} | ..."`);
    }
  });

  it("lists no code the registry does not have", () => {
    const documented = [...doc.matchAll(/^\|\s*([A-Z]\d{3,4})\s*\|\s*\d{3}\s*\|/gm)].map((m) => m[1]!);
    for (const code of documented) assert.ok(code in ERROR_CODES, `docs/errors.md lists ${code}, which src/errors.ts lacks`);
  });
});

describe("docs/configuration.md", () => {
  const doc = read("docs/configuration.md");
  const configVars = varsIn(read("src/config.ts"));

  it("documents every SORI_* variable read in src/config.ts", () => {
    assert.ok(configVars.size >= 20, `found only ${configVars.size} variables in src/config.ts`);
    for (const v of configVars) assert.match(doc, new RegExp("`" + v + "`"), `docs/configuration.md lacks ${v}`);
  });

  it("no doc of ours names a SORI_* variable that neither src/config.ts nor the engine reads", () => {
    const known = new Set([...configVars, ...engineVars()]);
    for (const file of ["README.md", "docs/api.md", "docs/configuration.md", "docs/errors.md", "docs/architecture.md"]) {
      for (const v of varsIn(read(file))) assert.ok(known.has(v), `${file} names ${v}, which nothing reads`);
    }
  });
});
