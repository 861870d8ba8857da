// Throughput and accuracy per host, the tables a buyer reads (docs/performance.md): a fixed realistic mix (Korean
// calls of 1 to 5 minutes with diarization, the Japanese and English files of the shared set, one 1-hour recording;
// engine/sori_eval/inputs.py build_mix) through a fresh `sori serve` with 1 and 2 workers, every job submitted at
// once over HTTP; and the same files through the plain faster-whisper script (bench/throughput_plain.py: sequential
// WhisperModel.transcribe, and BatchedInferencePipeline) in the same run. Printed per system: audio hours per CPU
// hour and per wall hour (CPU: the server's whole process tree, engines and their ended decode processes included;
// the plain script's own process). sori's note gives the decode processes' share of its CPU: an upper bound on what
// decoding in a process of its own costs (docs/security.md, "Untrusted media").
//
//   npx tsx bench/throughput.ts [--scale small|full|turnaround] [--workers 1,2] [--cpu-threads 0] [--no-plain]
//                                [--alone] [--files A,B] [--texts FILE] [--device cpu|cuda] [--compute-type TYPE]
//                                [--config JSON] [--keywords]
//
// `--alone` runs each file by itself, a fresh `sori serve` for each, then the batched pipeline on it: the turnaround
// a user waits for (`--scale turnaround`: the 5-minute diarized call and 20- and 60-minute Korean recordings).
// `--files` keeps only the mix files named.
//
// `--scale small` leaves the 1-hour recording out (15.5 min of audio instead of 75.5). Jobs use the settings a client
// of the RTZR API would send: `sommers` (beam 5) with `use_diarization` for the Korean calls, `sommers` for ja and for
// the Korean recording, `whisper` (beam 1) for en; `--config` adds job fields to every sori job (e.g.
// '{"use_itn": false}', '{"domain": "CALL"}'). `--cpu-threads` sets CTranslate2's threads per engine (the model
// registry's `cpu_threads`, through SORI_MODELS_FILE; 0 is CTranslate2's default), for the thread/worker table.
//
// A second table gives each system's CER per language on the files with a reference (all but the hour), in the one
// normal form (test/helpers/cer.ts; the Python twin engine/sori_eval/scoring.py): normalized [edits/chars], and
// exact (characters as written, spaces and punctuation counted, as RTZR's public evaluation scores). sori's text is
// what a client reads (the utterances' `msg`), the plain scripts' segments joined. `--keywords` gives sori's jobs the
// proper nouns of the references as `keywords` and adds keyword recall (reference occurrences found in the text).
// `--texts FILE` writes every system's text of every file, with the references, as JSON. `--device cuda` runs both
// systems' models on the GPU (float16 unless `--compute-type` says otherwise): sori through a models file with the
// built-in entries moved there, the plain script with the same device and type.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { defaultRegistry } from "../src/engine/models.js";
import { authenticate, read, submit } from "../test/helpers/api.js";
import { Tally } from "../test/helpers/cer.js";
import { ROOT } from "../test/helpers/paths.js";
import { createClient, startSori, tempDataDir } from "../test/helpers/server.js";
import { decodeProcessesCpuS, treeCpuS } from "./procCpu.js";

interface MixEntry {
  file: string;
  language: string;
  seconds: number;
  diarize: boolean;
  reference: string | null;
}

const { values: args } = parseArgs({
  options: {
    scale: { type: "string", default: "full" },
    workers: { type: "string", default: "1,2" },
    "cpu-threads": { type: "string", default: "0" },
    "no-plain": { type: "boolean", default: false },
    texts: { type: "string" },
    device: { type: "string", default: "cpu" },
    "compute-type": { type: "string" },
    config: { type: "string", default: "{}" },
    keywords: { type: "boolean", default: false },
    alone: { type: "boolean", default: false },
    files: { type: "string" },
  },
});
if (args.device !== "cpu" && args.device !== "cuda") throw new Error("--device: cpu or cuda");
const DEVICE = args.device;
const COMPUTE_TYPE = args["compute-type"] ?? (DEVICE === "cuda" ? "float16" : undefined);

const PY = path.join(ROOT, ".venv/bin/python");
const PLAIN = path.join(ROOT, "bench/throughput_plain.py");
const ENGINE_DIR = path.join(ROOT, "engine"); // cwd of `python -m sori_eval.inputs`

/** Proper nouns and rare words of the shared references, per language (--keywords). */
const KEYWORDS: Record<string, string[]> = {
  ko: ["삼계탕", "백화점", "맥거핀", "모범 답안", "필기시험", "임원 회의", "양아치", "서울"],
  ja: ["ヤンバルクイナ", "ブランコ", "ヘンゼル", "フリーダ", "気象庁", "興行主", "H2A"],
  en: ["Quilter", "TeamViewer", "Zoom", "Americans", "COVID-19", "subscriber churn"],
};
const EXTRA = JSON.parse(args.config) as Record<string, unknown>;

function configOf(e: MixEntry): Record<string, unknown> {
  const keywords = args.keywords ? { keywords: KEYWORDS[e.language] ?? [] } : {};
  if (e.language === "en") return { model_name: "whisper", language: "en", ...EXTRA, ...keywords };
  return {
    model_name: "sommers",
    language: e.language,
    ...(e.diarize ? { use_diarization: true } : {}),
    ...EXTRA,
    ...keywords,
  };
}

interface Row {
  system: string;
  audioS: number;
  wallS: number;
  cpuS: number;
  note: string;
  texts: Record<string, string>;
}

/**
 * A models file with the built-in entries at `threads` CTranslate2 threads and on --device / --compute-type
 * (undefined: the built-in as it is).
 */
function modelsFile(dir: string, threads: number): string | undefined {
  if (threads === 0 && DEVICE === "cpu" && COMPUTE_TYPE === undefined) return undefined;
  const builtIn = defaultRegistry(path.join(ROOT, "models"));
  const moved = (m: typeof builtIn.sommers) => ({
    ...m,
    ...(threads ? { cpu_threads: threads } : {}),
    device: DEVICE,
    ...(COMPUTE_TYPE ? { compute_type: COMPUTE_TYPE } : {}),
  });
  const file = path.join(dir, "models.json");
  fs.writeFileSync(file, JSON.stringify({ sommers: moved(builtIn.sommers), whisper: moved(builtIn.whisper) }));
  return file;
}

async function throughSori(mixDir: string, mix: MixEntry[], workers: number, threads: number): Promise<Row> {
  const models = modelsFile(mixDir, threads);
  const env: NodeJS.ProcessEnv = {
    SORI_DATA_DIR: tempDataDir(),
    SORI_PORT: "0",
    SORI_WORKERS: String(workers),
    SORI_POLL_MS: "200",
    ...(models ? { SORI_MODELS_FILE: models } : {}),
  };
  const client = createClient(env, ["--max-concurrent", "1000", "--quota-hours", "1000", "--read-rps", "1000"]);
  const sori = await startSori("serve", env);
  const pid = sori.child.pid!;
  try {
    const token = await authenticate(sori.url, client.client_id, client.client_secret);
    const cpu0 = treeCpuS(pid);
    const decode0 = decodeProcessesCpuS(pid);
    const w0 = Date.now();
    const ids: string[] = [];
    for (const e of mix) {
      const r = await submit(sori.url, token, path.join(mixDir, e.file), configOf(e));
      if (r.status !== 200) throw new Error(`submit ${e.file}: ${r.status} ${JSON.stringify(r.body)}`);
      ids.push(String(r.body.id));
    }
    let failed = 0;
    const texts: Record<string, string> = {};
    for (const [i, id] of ids.entries()) {
      for (;;) {
        const body = (await read(sori.url, token, id)).body;
        if (body.status === "failed") failed++;
        if (body.status === "completed") {
          texts[mix[i]!.file] = (body.results.utterances as { msg: string }[]).map((u) => u.msg).join(" ");
        }
        if (body.status !== "transcribing") break;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    const cpuS = treeCpuS(pid) - cpu0;
    const decodeS = decodeProcessesCpuS(pid) - decode0;
    return {
      system: `sori serve, ${workers} worker${workers > 1 ? "s" : ""}${threads ? `, cpu_threads ${threads}` : ""}${
        DEVICE === "cuda" ? `, cuda ${COMPUTE_TYPE}` : ""
      }`,
      audioS: mix.reduce((s, e) => s + e.seconds, 0),
      wallS: (Date.now() - w0) / 1000,
      cpuS,
      note: `${failed ? `${failed} failed` : "all completed"}; decode processes ${decodeS.toFixed(1)} CPU s (${(
        (100 * decodeS) / cpuS
      ).toFixed(1)} %)`,
      texts,
    };
  } finally {
    await sori.stop();
  }
}

function throughPlain(mixFile: string, batched: boolean): Row {
  const device = ["--device", DEVICE, ...(COMPUTE_TYPE ? ["--compute-type", COMPUTE_TYPE] : [])];
  const out = execFileSync(PY, [PLAIN, "run", mixFile, ...(batched ? ["--batched"] : []), ...device], {
    encoding: "utf8",
  });
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as {
    system: string;
    audio_s: number;
    wall_s: number;
    cpu_s: number;
    texts: Record<string, string>;
  };
  return {
    system: DEVICE === "cuda" ? `${r.system}, cuda ${COMPUTE_TYPE}` : r.system,
    audioS: r.audio_s,
    wallS: r.wall_s,
    cpuS: r.cpu_s,
    note: "beam 5, no diarization",
    texts: r.texts,
  };
}

async function main(): Promise<void> {
  const mixDir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-mix-"));
  execFileSync(PY, ["-m", "sori_eval.inputs", "mix", mixDir, "--scale", args.scale], {
    stdio: "inherit",
    cwd: ENGINE_DIR,
  });
  const only = args.files?.split(",");
  const mix = (JSON.parse(fs.readFileSync(path.join(mixDir, "mix.json"), "utf8")) as MixEntry[]).filter(
    (e) => !only || only.includes(e.file),
  );
  const rows: Row[] = [];
  const print = (r: Row): void => {
    const h = r.audioS / 3600;
    console.log(
      `| ${r.system} | ${(r.audioS / 60).toFixed(1)} | ${r.wallS.toFixed(0)} | ${r.cpuS.toFixed(0)} | ` +
        `${(h / (r.cpuS / 3600)).toFixed(2)} | ${(h / (r.wallS / 3600)).toFixed(2)} | ${r.note} |`,
    );
  };
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log("| system | audio min | wall s | CPU s | audio h per CPU h | audio h per wall h | |");
  console.log("|---|---|---|---|---|---|---|");
  if (args.alone) {
    for (const [i, e] of mix.entries()) {
      const one = path.join(mixDir, `mix-${i}.json`);
      fs.writeFileSync(one, JSON.stringify([e]));
      for (const w of args.workers.split(",").map(Number)) {
        const row = await throughSori(mixDir, [e], w, Number(args["cpu-threads"]));
        rows.push({ ...row, system: `${e.file}: ${row.system}` });
        print(rows.at(-1)!);
      }
      if (args["no-plain"]) continue;
      const row = throughPlain(one, true);
      rows.push({ ...row, system: `${e.file}: ${row.system}` });
      print(rows.at(-1)!);
    }
  } else {
    for (const w of args.workers.split(",").map(Number)) {
      rows.push(await throughSori(mixDir, mix, w, Number(args["cpu-threads"])));
      print(rows.at(-1)!);
    }
    if (!args["no-plain"]) {
      const selected = path.join(mixDir, "mix-selected.json");
      fs.writeFileSync(selected, JSON.stringify(mix));
      for (const batched of [false, true]) {
        rows.push(throughPlain(selected, batched));
        print(rows.at(-1)!);
      }
    }
  }
  if (args.texts) {
    const refs = Object.fromEntries(mix.map((e) => [e.file, e.reference]));
    fs.writeFileSync(args.texts, JSON.stringify({ references: refs, systems: rows.map((r) => [r.system, r.texts]) }));
  }
  const langs = [...new Set(mix.filter((e) => e.reference).map((e) => e.language))];
  console.log(`\noptions: ${args.config}${args.keywords ? ", keywords" : ""}`);
  console.log(`| system | ${langs.map((l) => `${l} CER normalized [edits/chars] / exact`).join(" | ")} |`);
  console.log(`|---|${langs.map(() => "---").join("|")}|`);
  for (const r of rows) {
    const cells = langs.map((lang) => {
      const tally = new Tally();
      for (const e of mix) {
        if (e.language !== lang || !e.reference) continue;
        if (args.alone && !r.system.startsWith(`${e.file}:`)) continue; // a row of one file
        tally.add(r.texts[e.file] ?? "", e.reference, lang);
      }
      const [edits, chars] = tally.norm as [number, number];
      const [exactEdits, exactChars] = tally.exact as [number, number];
      if (chars === 0) return "–";
      return `${(edits / chars).toFixed(3)} [${edits}/${chars}] / ${(exactEdits / exactChars).toFixed(3)}`;
    });
    console.log(`| ${r.system} | ${cells.join(" | ")} |`);
  }
  if (args.keywords) {
    for (const r of rows) {
      let [hits, total] = [0, 0];
      for (const e of mix) {
        for (const k of KEYWORDS[e.language] ?? []) {
          if (!e.reference?.includes(k)) continue;
          total++;
          if ((r.texts[e.file] ?? "").toLowerCase().includes(k.toLowerCase())) hits++;
        }
      }
      console.log(`keyword recall, ${r.system}: ${hits}/${total}`);
    }
  }
  console.log(
    `load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  fs.rmSync(mixDir, { recursive: true, force: true });
}

await main();
