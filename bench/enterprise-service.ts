// The Enterprise add-ons as a client gets them: through a fresh `sori serve` and the HTTP API, so that the
// service path cannot drift from what bench/enterprise.ts measures inside one process again.
//
// Starts `sori serve` (embedded default: SQLite, one in-process worker) in a new data folder, creates an Enterprise
// client, then submits the jobs one at a time, each after the one before is final, and prints per job the wall
// seconds from submit to final (and to the refined result) and the CPU seconds that the server's process tree (the
// Node process with the insight model, and the engine) spent meanwhile. Jobs: names from JOBS, in the order given.
//
//   npx tsx bench/enterprise-service.ts                                 # jfk x2, ko, jfk, dialogue, refine
//   npx tsx bench/enterprise-service.ts --jobs dialogue                 # the 69 s dialogue as the first job
//   npx tsx bench/enterprise-service.ts --state fresh                   # no evaluated prompt on disk (a fresh clone)
//
// `--state kept` (default) uses the configured SORI_INSIGHT_STATE_DIR (beside the model), as a restart does;
// `--state fresh` points it at an empty folder, as the first start after `make install` does.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { authenticate, read, submit } from "../test/helpers/api.js";
import { createClient, startSori, tempDataDir } from "../test/helpers/server.js";
import { ROOT, TESTDATA } from "./paths.js";
import { treeCpuS } from "./procCpu.js";

interface Job {
  file: string;
  config: Record<string, unknown>;
  /** Wait for the refined result too. */
  refined?: boolean;
}

const JOBS: Record<string, Job> = {
  jfk: { file: "en/whisper_jfk.flac", config: { model_name: "whisper", language: "en", use_insight: true } },
  ko: {
    file: "ko/deeply_studioapt_sub100100a00088.wav",
    config: { model_name: "sommers", language: "ko", use_insight: true },
  },
  dialogue: {
    file: "multi/deeply_ko_dialogue_constructed.wav",
    config: { model_name: "sommers", language: "ko", use_diarization: true, use_insight: true },
  },
  refine: {
    file: "ko/deeply_anechoic_sub100121a00083.wav",
    config: { model_name: "sommers", language: "ko", use_refinement: true },
    refined: true,
  },
  // A 5-minute Korean recording built from the shared audio (callAudio): the length of the evaluation set's long call.
  call5: {
    file: "",
    config: { model_name: "sommers", language: "ko", use_diarization: true, use_insight: true },
  },
  "refine-dialogue": {
    file: "multi/deeply_ko_dialogue_constructed.wav",
    config: { model_name: "sommers", language: "ko", use_diarization: true, use_refinement: true },
    refined: true,
  },
};

const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "jfk,jfk,ko,jfk,dialogue,refine" },
    state: { type: "string", default: "kept" },
  },
});

/** The 69 s dialogue, then the Korean clips and recordings of the shared set, to 300 s (16 kHz mono wav). */
function callAudio(): string {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sori-call5-")), "call5.wav");
  const script = `
import sys, wave, numpy as np
from pathlib import Path
from sori_engine import audio
root = Path(sys.argv[1]); parts = [root / "multi/deeply_ko_dialogue_constructed.wav"]
parts += sorted((root / "ko").glob("*.wav")) + sorted((root / "untranscribed").glob("vito_tritony_*.wav"))
pcm, total = [], 0
for p in parts:
    x = audio.decode(str(p)); pcm.append(x); total += x.size
    if total >= 300 * 16000: break
x = np.concatenate(pcm)[: 300 * 16000]
with wave.open(sys.argv[2], "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes((np.clip(x, -1, 1 - 1 / 32768) * 32767).astype("<i2").tobytes())
`;
  execFileSync(path.join(ROOT, ".venv/bin/python"), ["-c", script, TESTDATA, out], { cwd: path.join(ROOT, "engine") });
  return out;
}

/** Seconds the insight stage has taken in this server so far (sori_stage_duration_seconds, from /metrics). */
async function insightStageS(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^sori_stage_duration_seconds_sum\{stage="insight"\} ([\d.e+-]+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

async function until(fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<void> {
  const names = args.jobs.split(",").filter(Boolean);
  for (const n of names) if (!JOBS[n]) throw new Error(`unknown job ${n}; known: ${Object.keys(JOBS).join(", ")}`);
  const stateDir = args.state === "fresh" ? fs.mkdtempSync(path.join(os.tmpdir(), "sori-insight-state-")) : undefined;
  const env: NodeJS.ProcessEnv = {
    SORI_DATA_DIR: tempDataDir(),
    SORI_PORT: "0",
    SORI_WORKERS: "1",
    ...(stateDir ? { SORI_INSIGHT_STATE_DIR: stateDir } : {}),
  };
  const client = createClient(env, ["--tier", "enterprise"]);
  const t0 = Date.now();
  const sori = await startSori("serve", env);
  const pid = sori.child.pid!;
  const token = await authenticate(sori.url, client.client_id, client.client_secret);
  console.log(`sori serve up in ${((Date.now() - t0) / 1000).toFixed(1)} s (state ${args.state}); jobs in order:`);
  console.log("| # | job | audio | wall s (submit -> final) | CPU s (server + engine) | insight stage s | result |");
  console.log("|---|---|---|---|---|---|---|");
  try {
    for (const [i, name] of names.entries()) {
      const job = JOBS[name]!;
      const file = job.file ? path.join(TESTDATA, job.file) : callAudio();
      const insight0 = await insightStageS(sori.url);
      const cpu0 = treeCpuS(pid);
      const w0 = Date.now();
      const r = await submit(sori.url, token, file, job.config);
      if (r.status !== 200) throw new Error(`submit ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      const id = String(r.body.id);
      let body: any;
      await until(async () => {
        body = (await read(sori.url, token, id)).body;
        return body.status !== "transcribing";
      }, 900_000);
      const wallS = (Date.now() - w0) / 1000;
      let result: string;
      if (job.refined) {
        let refined: any;
        await until(async () => {
          refined = (await read(sori.url, token, id, "?result=refined")).body;
          return refined.refine_status === "completed" || refined.refine_status === "failed";
        }, 900_000);
        const refinedS = (Date.now() - w0) / 1000;
        result = `base ${wallS.toFixed(1)} s, refine_status ${refined.refine_status} at ${refinedS.toFixed(1)} s`;
      } else {
        const insight = body.results?.insight;
        result = `${body.status}; insight ${JSON.stringify(insight)}`;
      }
      const cpuS = treeCpuS(pid) - cpu0;
      const totalS = (Date.now() - w0) / 1000;
      const insightS = (await insightStageS(sori.url)) - insight0;
      const what = job.file || "5-min Korean call (built)";
      console.log(
        `| ${i + 1} | ${name} | ${what} | ${totalS.toFixed(1)} | ${cpuS.toFixed(1)} | ${insightS.toFixed(1)} | ${result} |`,
      );
    }
  } finally {
    const ready = sori.logs.find((l) => l.includes('"insight model ready"'));
    if (ready) console.log(`log: ${ready}`);
    await sori.stop();
    if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
