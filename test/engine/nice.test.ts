// The engine runs below the service's CPU priority (SORI_ENGINE_NICE), so reads stay fast while it decodes.
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { after, it } from "node:test";
import { Engine } from "../../src/engine/client.js";
import { ROOT } from "../helpers/server.js";

const engine = new Engine({ python: path.join(ROOT, ".venv", "bin", "python"), nice: 5 });
after(() => engine.stop());

it("the engine process gets the configured niceness on top of the service's own", async () => {
  await engine.ping();
  assert.ok(engine.pid);
  assert.equal(os.getPriority(engine.pid), Math.min(19, os.getPriority() + 5));
});
