// Where one job's CPU goes through the service, beside the engine's own profile (bench/profile.py): a fresh
// `sori serve` with one worker gets the same job several times over HTTP, one at a time, and each job's CPU is split
// into the engine's (the worker's engine process) and Node's (HTTP, store and queue, the text stages, diarization's
// word assignment), with the wall time of each pipeline stage from /metrics (sori_stage_duration_seconds).
//
//   npx tsx bench/profile-service.ts [--input call|ko26] [--config '{"model_name":"sommers","language":"ko"}']
//       [--jobs 3]
//
// The first job is not counted (the engine loads its models on it). Figures: docs/performance.md.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { authenticate, read, submit } from "../test/helpers/api.js";
import { createClient, startSori, tempDataDir } from "../test/helpers/server.js";
import { ROOT } from "./paths.js";
import { treeCpuS } from "./procCpu.js";

const { values: args } = parseArgs({
  options: {
    input: { type: "string", default: "call" },
    config: { type: "string", default: '{"model_name":"sommers","language":"ko"}' },
    jobs: { type: "string", default: "3" },
  },
});

const PY = path.join(ROOT, ".venv/bin/python");

/** CPU seconds of one process alone (not its children), from /proc. */
function ownCpuS(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The input's wav: the 5-minute call of the throughput mix, or the 26 Korean clips end to end. */
function buildInput(dir: string): string {
  if (args.input === "call") {
    execFileSync(PY, [path.join(ROOT, "bench/throughput_plain.py"), "build", dir, "--scale", "small"]);
    return path.join(dir, "ko-call-5min.wav");
  }
  const out = path.join(dir, "ko26.wav");
  execFileSync(PY, [
    "-c",
    `import sys; sys.path.insert(0, "${ROOT}/bench"); import rtf; ` +
      `_l, x, _r = rtf.build_input("ko", rtf.manifest()); rtf.write_wav(__import__("pathlib").Path("${out}"), x)`,
  ]);
  return out;
}

async function stageSums(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sums = new Map<string, number>();
  for (const m of text.matchAll(/^sori_stage_duration_seconds_sum\{stage="(\w+)"\} ([\d.e+-]+)$/gm)) {
    sums.set(m[1]!, Number(m[2]));
  }
  return sums;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-profile-"));
  const wav = buildInput(dir);
  const audioS = (fs.statSync(wav).size - 44) / 2 / 16000;
  const env: NodeJS.ProcessEnv = { SORI_DATA_DIR: tempDataDir(), SORI_PORT: "0", SORI_WORKERS: "1" };
  const client = createClient(env, ["--max-concurrent", "100", "--quota-hours", "100", "--read-rps", "100"]);
  const sori = await startSori("serve", env);
  const pid = sori.child.pid!;
  const config = JSON.parse(args.config) as Record<string, unknown>;
  console.log(
    `input ${args.input} (${audioS.toFixed(1)} s), config ${args.config}, load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  console.log("| job | wall s | Node CPU s | engine CPU s | stages (wall s) |\n|---|---:|---:|---:|---|");
  try {
    const token = await authenticate(sori.url, client.client_id, client.client_secret);
    const jobs = Number(args.jobs);
    for (let i = 0; i < jobs; i++) {
      const node0 = ownCpuS(pid);
      const tree0 = treeCpuS(pid);
      const stages0 = await stageSums(sori.url);
      const w0 = Date.now();
      const r = await submit(sori.url, token, wav, config);
      if (r.status !== 200) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
      for (;;) {
        const body = (await read(sori.url, token, String(r.body.id))).body;
        if (body.status === "failed") throw new Error(`job failed: ${JSON.stringify(body)}`);
        if (body.status === "completed") break;
        await new Promise((res) => setTimeout(res, 200));
      }
      const wall = (Date.now() - w0) / 1000;
      const node = ownCpuS(pid) - node0;
      const engine = treeCpuS(pid) - tree0 - node;
      const stages = await stageSums(sori.url);
      const spent = [...stages].map(([s, v]) => `${s} ${(v - (stages0.get(s) ?? 0)).toFixed(2)}`).join(", ");
      console.log(
        `| ${i === 0 ? "1 (models load)" : i + 1} | ${wall.toFixed(1)} | ${node.toFixed(2)} | ${engine.toFixed(2)} | ${spent} |`,
      );
    }
  } finally {
    await sori.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
