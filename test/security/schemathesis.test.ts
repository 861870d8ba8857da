// schemathesis (PyPI, the engine's [dev] extra) against a real server, driven by the server's own /openapi.json:
// generated and mutated requests for every operation, with a client's bearer token. It fails on any 5xx, and on a
// response whose status, content type or body the document does not declare. The server has no workers, so the
// few submits that pass every check only queue a job. A fixed seed keeps CI reproducible; run the same command
// without --seed (and with a larger -n) to explore further.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Sqlite from "better-sqlite3";
import { authenticate, submit } from "../helpers/api.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, unthrottledApiEnv } from "../helpers/server.js";

const ST = path.join(ROOT, ".venv", "bin", "schemathesis");
const RUN_LIMIT_MS = 80_000;
const JFK = path.join(TESTDATA, "en/whisper_jfk.flac");

describe(
  "schemathesis against /openapi.json",
  { skip: fs.existsSync(ST) ? false : "no .venv/bin/schemathesis: run make install" },
  () => {
    let sori: SoriProcess;
    let env: NodeJS.ProcessEnv;
    let token: string;
    const jobIds: string[] = [];

    before(async () => {
      env = unthrottledApiEnv({ SORI_MAX_FILE_BYTES: String(4 * 1024 * 1024) });
      const c = createClient(env);
      sori = await startSori("serve", env);
      token = await authenticate(sori.url, c.client_id, c.client_secret);
      // Real jobs for the id routes, so that their 200 bodies are checked too: for the reads one completed (as a worker
      // would leave it) and one still queued; two others for DELETE, which would otherwise delete the ones the reads
      // use. schemathesis takes them for half of the ids it sends (see the config below).
      for (let i = 0; i < 4; i++) {
        const r = await submit(sori.url, token, JFK, {});
        assert.equal(r.status, 200, JSON.stringify(r.body));
        jobIds.push(String(r.body.id));
      }
      const db = new Sqlite(path.join(env.SORI_DATA_DIR!, "sori.db"));
      const result = {
        utterances: [{ start_at: 0, duration: 1500, msg: "and so my fellow Americans", spk: 0, lang: "en" }],
      };
      db.prepare("UPDATE tasks SET state = 'completed', finished_at = ? WHERE job_id = ? AND kind = 'transcribe'").run(
        Date.now(),
        jobIds[0],
      );
      db.prepare("UPDATE jobs SET result = ?, expires_at = ? WHERE id = ?").run(
        JSON.stringify(result),
        Date.now() + 3600_000,
        jobIds[0],
      );
      db.close();
    });
    after(async () => {
      await sori.stop();
      fs.rmSync(env.SORI_DATA_DIR!, { recursive: true, force: true });
    });

    it("finds no server error and no undeclared response", { timeout: RUN_LIMIT_MS + 10_000 }, async (t) => {
      const args = [
        "run",
        `${sori.url}/openapi.json`,
        "--header",
        `Authorization: Bearer ${token}`,
        "--phases",
        "examples,coverage,fuzzing",
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        "--max-examples",
        "15",
        "--seed",
        "20261121",
        "--request-timeout",
        "10",
        "--workers",
        "1",
        "--no-color",
      ];
      // schemathesis.toml in its working directory: real ids for the `id` path parameter half of the time.
      const config = [
        `[dictionaries.jobs]\nvalues = ${JSON.stringify(jobIds.slice(0, 2))}`,
        `[dictionaries.doomed]\nvalues = ${JSON.stringify(jobIds.slice(2))}`,
        `[parameters]\n"path.id" = { dictionary = "jobs", probability = 0.5 }`,
        `[[operations]]\ninclude-method = "DELETE"\nparameters = { "path.id" = { dictionary = "doomed", probability = 0.5 } }`,
      ].join("\n\n");
      const run = await runFor(ST, args, RUN_LIMIT_MS, { "schemathesis.toml": config });
      const summary = run.output
        .split("\n")
        .filter((l) => /passed|failed|error|Test cases|Missing test data/.test(l))
        .slice(-8)
        .join("\n");
      t.diagnostic(summary);
      assert.ok(!run.timedOut, `schemathesis ran past ${RUN_LIMIT_MS} ms:\n${run.output.slice(-4000)}`);
      assert.equal(run.code, 0, run.output.slice(-8000));
      assert.match(run.output, /Operations:\s+\d+ selected/, summary);
      // The server logs every 5xx it answers; there must be none, whatever schemathesis made of them.
      assert.deepEqual(
        sori.logs.filter((l) => l.includes('"unhandled error"')),
        [],
      );
    });
  },
);

function runFor(
  cmd: string,
  args: string[],
  limitMs: number,
  files: Record<string, string>,
): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    // Its example database (.hypothesis) and crash files (.schemathesis) go to a scratch directory, not the repo.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "sori-st-"));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(cwd, name), text);
    const child = spawn(cmd, args, { cwd, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    let timedOut = false;
    const t = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, limitMs);
    child.on("close", (code) => {
      clearTimeout(t);
      fs.rmSync(cwd, { recursive: true, force: true });
      resolve({ code, output, timedOut });
    });
  });
}
