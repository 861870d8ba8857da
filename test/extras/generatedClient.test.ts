// A client generated from /openapi.json by a real generator (openapi-python-client, in .venv-contract) completes
// submit -> read -> export against sori with a worker: the document is complete enough to build a working client.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const VENV = path.join(ROOT, ".venv-contract", "bin");
const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");

describe(
  "a client generated from /openapi.json (openapi-python-client)",
  { skip: fs.existsSync(path.join(VENV, "openapi-python-client")) ? false : "no .venv-contract: run make test" },
  () => {
    let sori: SoriProcess;
    let creds: { client_id: string; client_secret: string };
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "sori-gen-"));
    before(async () => {
      const env = { SORI_DATA_DIR: tempDataDir(), SORI_WORKERS: "1", SORI_PORT: "0" };
      creds = createClient(env);
      sori = await startSori("serve", env);
    });
    after(async () => {
      await sori.stop();
      fs.rmSync(work, { recursive: true, force: true });
    });

    it("submits, reads until completed, and exports", { timeout: 240_000 }, async () => {
      const doc = await (await fetch(`${sori.url}/openapi.json`)).text();
      fs.writeFileSync(path.join(work, "openapi.json"), doc);
      fs.writeFileSync(
        path.join(work, "config.yaml"),
        "post_hooks: []\nproject_name_override: sori_client\npackage_name_override: sori_client\n",
      );
      const gen = spawnSync(
        path.join(VENV, "openapi-python-client"),
        [
          "generate",
          "--path",
          "openapi.json",
          "--output-path",
          "sori_client",
          "--config",
          "config.yaml",
          "--meta",
          "none",
        ],
        { cwd: work, encoding: "utf8" },
      );
      assert.equal(gen.status, 0, gen.stdout + gen.stderr);
      const run = spawnSync(
        path.join(VENV, "python"),
        [path.join(ROOT, "test/extras/generated_client.py"), sori.url, creds.client_id, creds.client_secret, JFK],
        { cwd: work, encoding: "utf8", env: { ...process.env, PYTHONPATH: work }, timeout: 200_000 },
      );
      assert.equal(run.status, 0, run.stdout + run.stderr);
      const out = JSON.parse(run.stdout.trim().split("\n").pop()!);
      assert.equal(out.status, "completed", run.stdout);
      assert.ok(out.utterances > 0, run.stdout);
      assert.equal(out.export_status, 200, run.stdout);
      assert.match(out.export, /-->/); // SubRip, the default format
    });
  },
);
