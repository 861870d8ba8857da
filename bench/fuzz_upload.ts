// The longer fuzz run of untrusted media (docs/security.md, "Untrusted media"): many seeded mutations of each of the
// six formats uploaded to a fresh `sori serve`, with a good job beside them the whole time.
//
//   flock ~/.sori-bench.lock nice -n 5 npx tsx bench/fuzz_upload.ts [--per-format 334] [--seed 1] [--json FILE]
//
// The six formats' short files come from test/audio/make_fixtures.py (built in a temp dir from the shared audio);
// each is mutated by engine/sori_eval/mutate.py (the engine tests' own mutations). `--in-flight` mutated uploads go
// at once (default 3); a good job (the unmutated wav) is submitted again as each one ends. Every answer is checked
// against /openapi.json (test/helpers/api.ts), so a 4xx is in the spec's shape. Prints, and with --json writes:
// - files tried, and how each ended: a 4xx at submit (its code), or a job completed or failed (its error.code);
// - decode processes that died or hit a limit, counted from the failed jobs' messages;
// - good jobs run, and those affected (not completed, or another text): must be 0;
// - unexpected ends (a 5xx, a job not final after --limit-s, a failure code other than H0010 / H0006, /healthz
//   not 200): must be 0;
// - whether an engine of the service ever mapped libavformat / libavcodec (must not), and a clean job at the end.
// Exits 1 when a must-be-0 count is not 0.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { authenticate, submit, waitFinal } from "../test/helpers/api.js";
import { createClient, startSori, TESTDATA, tempDataDir } from "../test/helpers/server.js";
import { enginesUnder, ffmpegMapped, makeFixtures, mutatedCopies, SIX } from "../test/helpers/untrustedMedia.js";

const { values: args } = parseArgs({
  options: {
    "per-format": { type: "string", default: "334" },
    seed: { type: "string", default: "1" },
    "in-flight": { type: "string", default: "3" },
    "limit-s": { type: "string", default: "300" },
    json: { type: "string" },
  },
});
const PER_FORMAT = Number(args["per-format"]);
const IN_FLIGHT = Number(args["in-flight"]);
const LIMIT_MS = Number(args["limit-s"]) * 1000;
// What a failed job's message says when its decode process died or hit a limit (engine/sori_engine/media/sandbox.py).
const KINDS: Record<string, string> = {
  died: "decode process died",
  "cpu limit": "CPU time limit",
  "memory limit": "memory limit",
  "wall-time limit": "gave no output",
  "malformed output": "malformed",
};

const count = (c: Record<string, number>, k: string): void => {
  c[k] = (c[k] ?? 0) + 1;
};

/** What a job read says at its end (or why there was none). */
interface JobEnd {
  status: string;
  error?: { code: string; message: string };
  results?: { utterances: { msg: string }[] };
}

/** The job's final read, or why there was none (not final within `LIMIT_MS`, a read refused). */
async function ending(url: string, token: string, id: string): Promise<JobEnd> {
  try {
    return (await waitFinal(url, token, id, LIMIT_MS)) as JobEnd;
  } catch (e) {
    return { status: `no end: ${(e as Error).message}` };
  }
}

async function main(): Promise<number> {
  const work = tempDataDir();
  const fx = makeFixtures(work, TESTDATA);
  const files = SIX.flatMap((name) => mutatedCopies(fx[name]!, work, `${args.seed}-${name}`, PER_FORMAT));
  const env = { SORI_DATA_DIR: tempDataDir(), SORI_PORT: "0", SORI_POLL_MS: "100" };
  const client = createClient(env, ["--max-concurrent", "1000", "--quota-hours", "1000", "--read-rps", "1000"]);
  const sori = await startSori("serve", env);
  const token = await authenticate(sori.url, client.client_id, client.client_secret);
  const ko = { language: "ko" };
  const good = fx["wav_s16_16k_mono.wav"]!;
  const textOf = (b: JobEnd): string => (b.results?.utterances ?? []).map((u) => u.msg).join(" ");
  const goodJob = async (): Promise<JobEnd> => {
    const r = await submit(sori.url, token, good, ko);
    return r.status === 200 ? ending(sori.url, token, String(r.body.id)) : { status: `submit ${r.status}` };
  };
  const first = await goodJob();
  if (first.status !== "completed") throw new Error(`the good file: ${JSON.stringify(first)}`);
  const reference = textOf(first);

  const ends: Record<string, number> = {};
  const decodeProcesses: Record<string, number> = {};
  const unexpected: string[] = [];
  let goodRuns = 0;
  let goodAffected = 0;
  let goodOtherText = 0;
  let ffmpegSeen = 0;
  let tried = 0;
  let done = false;
  const began = Date.now();
  const beside = (async () => {
    while (!done) {
      const b = await goodJob();
      goodRuns++;
      if (b.status !== "completed") {
        goodAffected++;
        console.error("GOOD JOB AFFECTED:", JSON.stringify(b));
      } else if (textOf(b) !== reference) goodOtherText++;
    }
  })();
  const queue = [...files];
  const one = async (file: string): Promise<void> => {
    const r = await submit(sori.url, token, file, ko);
    let end: string;
    if (r.status >= 400 && r.status < 500) end = `${r.status} ${r.body.code}`;
    else if (r.status !== 200) end = `submit ${r.status}`;
    else {
      const b = await ending(sori.url, token, String(r.body.id));
      end = b.status === "failed" ? `failed ${b.error?.code}` : b.status;
      for (const [kind, words] of Object.entries(KINDS)) {
        if (b.status === "failed" && String(b.error?.message).includes(words)) count(decodeProcesses, kind);
      }
    }
    count(ends, end);
    if (!/^(4\d\d H\d{4}|completed|failed H0010|failed H0006)$/.test(end)) unexpected.push(`${file}: ${end}`);
    if ((await fetch(`${sori.url}/healthz`)).status !== 200) unexpected.push(`${file}: /healthz not 200`);
    tried++;
    if (tried % 50 === 0) {
      for (const e of enginesUnder(sori.child.pid!)) ffmpegSeen += Number(ffmpegMapped(e));
      console.log(`${tried} files, ${((Date.now() - began) / 1000).toFixed(0)} s: ${JSON.stringify(ends)}`);
    }
    fs.rmSync(file, { force: true });
  };
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let f = queue.shift(); f !== undefined; f = queue.shift()) await one(f);
    }),
  );
  done = true;
  await beside;
  const wallS = (Date.now() - began) / 1000;
  for (const e of enginesUnder(sori.child.pid!)) ffmpegSeen += Number(ffmpegMapped(e));
  const clean = await goodJob();
  await sori.stop();
  const report = {
    files_tried: tried,
    ends,
    decode_processes: decodeProcesses,
    good_jobs_run: goodRuns,
    other_jobs_affected: goodAffected,
    good_jobs_other_text: goodOtherText,
    unexpected: unexpected.length,
    engine_mapped_ffmpeg: ffmpegSeen,
    clean_job_after: clean.status,
    wall_s: Math.round(wallS),
  };
  for (const u of unexpected.slice(0, 20)) console.error("UNEXPECTED:", u);
  console.log(JSON.stringify(report, null, 1));
  if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(report, null, 1)}\n`);
  fs.rmSync(work, { recursive: true, force: true });
  return goodAffected === 0 && unexpected.length === 0 && ffmpegSeen === 0 && clean.status === "completed" ? 0 : 1;
}

process.exitCode = await main();
