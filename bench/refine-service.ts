// Refinement as a client gets it (docs/enterprise.md, "Refinement"): a fresh `sori serve` (embedded default, one
// worker), an Enterprise client, and every file of the given parts of bench/refine/parts.py submitted with
// `use_refinement` one at a time; the plain read (base) and `?result=refined` are scored against the reference.
// Prints per part: normalized CER base -> refined (test/helpers/cer.ts), utterances changed, of those how many made their
// file's transcript better / worse (each change alone), and the CPU seconds the server's process tree (Node and
// the engine) spent per audio minute on the base job (submit -> base completed) and on refinement (base completed
// -> refine_status final). --root runs another checkout's server (e.g. a worktree of the commit before, for the
// "before" figures).
//
//   flock ~/.sori-bench.lock npx tsx bench/refine-service.ts --parts /tmp/sori-refine-parts --only ko-dev,ko-held
import path from "node:path";
import { parseArgs } from "node:util";
import { authenticate, read, submit } from "../test/helpers/api.js";
import { clips, normalEdits, Tally } from "../test/helpers/cer.js";
import { ROOT } from "../test/helpers/paths.js";
import { treeCpuS } from "./procCpu.js";

const { values: args } = parseArgs({
  options: {
    parts: { type: "string", default: "/tmp/sori-refine-parts" },
    only: { type: "string", default: "ko-dev,ja-dev,ko-dev-8k,ja-dev-8k,ko-held,ja-held,ko-held-8k,ja-held-8k" },
    root: { type: "string", default: ROOT },
    verbose: { type: "boolean", default: false },
  },
});

type Server = typeof import("../test/helpers/server.js");
const server: Server = await import(path.join(path.resolve(args.root!), "test/helpers/server.ts"));

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The bench polls every 200 ms: read limits out of the way.
const env: NodeJS.ProcessEnv = {
  SORI_DATA_DIR: server.tempDataDir(),
  SORI_PORT: "0",
  SORI_WORKERS: "1",
  SORI_DEFAULT_READ_RPS: "10000",
  SORI_DEFAULT_READ_BURST: "10000",
};
const client = server.createClient(env, ["--tier", "enterprise"]);
const sori = await server.startSori("serve", env);
const pid = sori.child.pid!;
const token = await authenticate(sori.url, client.client_id, client.client_secret);
const msgs = (body: { results?: { utterances?: { msg: string }[] } }): string[] =>
  (body.results?.utterances ?? []).map((u) => u.msg);
console.log(`server: ${path.resolve(args.root!)}`);
console.log(
  "| part | files | utterances | base CER | refined CER | changed | better / worse | CPU s / audio min: base, refinement |",
);
console.log("|---|---|---|---|---|---|---|---|");
try {
  for (const part of args.only!.split(",")) {
    const lang = part.slice(0, 2);
    const dir = path.join(args.parts!, part);
    const [base, refined] = [new Tally(), new Tally()];
    let [utterances, changed, better, worse, audioS, baseCpu, refineCpu] = [0, 0, 0, 0, 0, 0, 0];
    const joiner = lang === "ja" ? "" : " ";
    for (const row of clips(dir, [lang])) {
      const c0 = treeCpuS(pid);
      const r = await submit(sori.url, token, path.join(dir, row.file), { language: lang, use_refinement: true });
      if (r.status !== 200) throw new Error(`submit ${row.file}: ${r.status} ${JSON.stringify(r.body)}`);
      const id = String(r.body.id);
      const b = await until(async () => {
        const x = (await read(sori.url, token, id)).body;
        return x.status === "completed" || x.status === "failed" ? x : undefined;
      }, 1_800_000);
      const c1 = treeCpuS(pid);
      const f = await until(async () => {
        const x = (await read(sori.url, token, id, "?result=refined")).body;
        return x.refine_status === "completed" || x.refine_status === "failed" ? x : undefined;
      }, 1_800_000);
      const c2 = treeCpuS(pid);
      if (b.status !== "completed" || f.refine_status !== "completed")
        throw new Error(`${row.file}: ${b.status} / ${f.refine_status} ${JSON.stringify(f.refine_error ?? b.error)}`);
      baseCpu += c1 - c0;
      refineCpu += c2 - c1;
      audioS += (b.results.utterances as { start_at: number }[]).length ? await durationS(dir, row.file) : 0;
      const [before, after] = [msgs(b), msgs(f)];
      base.add(before.join(joiner), row.ref, lang);
      refined.add(after.join(joiner), row.ref, lang);
      utterances += before.length;
      const e0 = normalEdits(before.join(joiner), row.ref, lang);
      after.forEach((m, i) => {
        if (m === before[i]) return;
        changed++;
        const alone = normalEdits(before.map((x, j) => (j === i ? m : x)).join(joiner), row.ref, lang) - e0;
        if (alone < 0) better++;
        if (alone > 0) worse++;
        if (args.verbose) console.error(`${alone}\t${part}/${row.file} #${i}\n\t- ${before[i]}\n\t+ ${m}`);
      });
    }
    const m = audioS / 60;
    const rate = (t: Tally): string => `${((100 * t.norm[0]!) / t.norm[1]!).toFixed(1)} % (${t.norm[0]}/${t.norm[1]})`;
    console.log(
      `| ${part} | ${base.fileNorm.length} | ${utterances} | ${rate(base)} | ${rate(refined)} | ${changed} | +${better} / −${worse} | ${(baseCpu / m).toFixed(1)}, ${(refineCpu / m).toFixed(1)} |`,
    );
  }
} finally {
  await sori.stop();
}

/** Seconds of a wav file (every part file is a PCM wav: bench/refine/parts.py). */
async function durationS(dir: string, file: string): Promise<number> {
  const fs = await import("node:fs");
  const buf = fs.readFileSync(path.join(dir, file));
  const rate = buf.readUInt32LE(24);
  const blockAlign = buf.readUInt16LE(32);
  let at = 12;
  while (at + 8 <= buf.length) {
    const id = buf.toString("ascii", at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === "data") return size / blockAlign / rate;
    at += 8 + size + (size % 2);
  }
  return 0;
}
