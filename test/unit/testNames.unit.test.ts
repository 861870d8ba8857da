// `make test-unit` runs the files named *.unit.test.ts (test/README.md, "Unit tests"): such a file starts no process,
// so it must not reach for what starts one: a `sori` server, an engine, a child process, the browser, the helpers
// that start S3, PostgreSQL clusters or network namespaces (scaleout.ts, pgCluster.ts, netns.ts), or the load bench.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { it } from "node:test";

const TEST_DIR = path.join(import.meta.dirname, "..");
const STARTS_A_PROCESS =
  /\bstartSori\(|\bnew Engine\(|node:child_process|\bchromium\b|helpers\/(scaleout|pgCluster|netns)\.js|bench\/load/;

it("no unit test starts a process", () => {
  const unit = fs
    .readdirSync(TEST_DIR, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".unit.test.ts") && path.basename(f) !== path.basename(import.meta.filename));
  assert.ok(unit.length > 20, `found ${unit.length} unit test files`);
  const offenders = unit.filter((f) => STARTS_A_PROCESS.test(fs.readFileSync(path.join(TEST_DIR, f), "utf8")));
  assert.deepEqual(offenders, [], "rename these to *.test.ts (make test runs them) or take the process out");
});
