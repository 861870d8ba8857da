// What the Enterprise add-ons cost and buy (docs/enterprise.md), through the same functions a worker calls.
//
// Refinement: every ko and ja file of ../shared/testdata is transcribed with the default options (runPipeline),
// then refined (the engine's `refine` op + the selection rule); CER of base and refined text is printed per
// language, corpus level and as the mean of per-file CERs, exact (spaces and punctuation counted) and normalized
// (NFKC, numbers verbalized, punctuation and spaces removed), with the seconds refinement adds per minute of audio.
// The engine's scores are kept, so each --margins value is evaluated on the same decodes.
//
// Insight: every item of the evaluation set (bench/insight/) through generateInsight with each --insight-models
// GGUF file (default: the configured model): category accuracy, key-fact recall, compression, copy rate, and the
// CPU and wall seconds per job (the model is loaded and the shared prompt evaluated once, before timing, as a
// worker does once per process); the long item (a 5-minute call) is timed on its own.
//
//   nice -n 19 npx tsx bench/enterprise.ts                           # refinement ko,ja + insight
//   nice -n 19 npx tsx bench/enterprise.ts --langs ko --max-files 5 --no-insight
//   nice -n 10 npx tsx bench/enterprise.ts --no-refine --insight-models models/a.gguf,models/b.gguf
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { parseJobConfig } from "../src/domain/jobConfig.js";
import { Engine } from "../src/engine/client.js";
import { loadModelRegistry } from "../src/engine/models.js";
import { copyRate } from "../src/insight/copy.js";
import { generateInsight as generate, transcriptOf } from "../src/insight/index.js";
import { LocalLlm } from "../src/insight/local.js";
import { MAX_COPY_RATE } from "../src/insight/schema.js";
import { runPipeline } from "../src/pipeline/run.js";
import { applyRefinement, refineParams, refinerFromConfig } from "../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../src/refine/select.js";
import { clips, Tally } from "../test/helpers/cer.js";
import { ROOT, TESTDATA } from "../test/helpers/paths.js";
import { factsKept, loadEvalSet } from "./insight/evalset.js";

const { values: args } = parseArgs({
  options: {
    langs: { type: "string", default: "ko,ja" },
    "max-files": { type: "string" },
    "skip-files": { type: "string", default: "0" },
    margins: { type: "string", default: `${DEFAULT_SELECT.margin}` },
    votes: { type: "string", default: `${DEFAULT_SELECT.minVotes}` },
    "no-refine": { type: "boolean", default: false },
    "no-insight": { type: "boolean", default: false },
    "insight-models": { type: "string" },
    "insight-ids": { type: "string" },
    "insight-threads": { type: "string" },
    // Last item first: a second process started beside a running one covers the set from the other end (summarize.ts
    // merges the two logs), which is how the 40 items fit in one session on the shared 2-core machine.
    "insight-reverse": { type: "boolean", default: false },
    // Wall-clock limit per transcript; a busy shared machine needs more than a worker's SORI_INSIGHT_TIMEOUT_S.
    "insight-timeout-s": { type: "string", default: "600" },
    // Another checkout's src/insight (e.g. the main branch, for the "before" figures), with that checkout's model.
    "insight-from": { type: "string" },
  },
});

async function main(): Promise<void> {
  const config = loadConfig();
  const models = loadModelRegistry(config.modelsDir, config.modelsFile);
  const engine = new Engine({ python: config.python });
  const settings = refinerFromConfig(config)!;
  // Selection variants evaluated on the same decodes: every margin × every minimum number of agreeing decodes.
  const margins = args.margins!.split(",").flatMap((m) => args.votes!.split(",").map((v) => `${m}/${v}`));
  const skip = Number(args["skip-files"]);
  const max = skip + (args["max-files"] ? Number(args["max-files"]) : Infinity);
  // Lines are printed as each part finishes (a long run stopped half-way still reports what it measured).
  const out = { push: (line: string): void => console.log(line) };
  try {
    if (!args["no-refine"]) {
      for (const lang of args.langs!.split(",")) {
        const base = new Tally();
        const refined = new Map(margins.map((m) => [m, new Tally()]));
        let audioS = 0;
        let baseMs = 0;
        let refineMs = 0;
        let changed = 0;
        let utterances = 0;
        for (const row of clips(TESTDATA, [lang]).slice(skip, max)) {
          const jobConfig = parseJobConfig(JSON.stringify({ language: lang, use_refinement: true }));
          const audioPath = path.join(TESTDATA, row.file);
          const t0 = Date.now();
          const results = await runPipeline(
            { config: jobConfig, audioPath, maxAudioS: config.maxAudioS },
            { engine, models, timeoutFactor: 10 },
            null,
          );
          const t1 = Date.now();
          const deps = { engine, settings, maxAudioS: config.maxAudioS, timeoutMs: 600_000 };
          const raw = results.utterances.length
            ? await engine.refine(refineParams(results.utterances, jobConfig, audioPath, deps), { timeoutMs: 600_000 })
            : { spans: [] };
          const t2 = Date.now();
          baseMs += t1 - t0;
          refineMs += t2 - t1;
          const probe = await engine.probe(audioPath);
          audioS += probe.duration_s ?? 0;
          const joiner = lang === "ja" ? "" : " ";
          const baseText = results.utterances.map((u) => u.msg).join(joiner);
          base.add(baseText, row.ref, lang);
          utterances += results.utterances.length;
          for (const m of margins) {
            const [margin, minVotes] = m.split("/").map(Number) as [number, number];
            const r = applyRefinement(
              results.utterances,
              raw,
              jobConfig,
              { languages: null, agree: null, select: { ...settings.rule.select, margin, minVotes } },
              settings.decodes.length,
            );
            refined.get(m)!.add(r.utterances.map((u) => u.msg).join(joiner), row.ref, lang);
            if (m === margins[0]) {
              changed += r.changed;
              process.stderr.write(
                `${row.file}\n  ref:  ${row.ref}\n  base: ${baseText}\n  ref.: ${r.utterances.map((u) => u.msg).join(joiner)}\n`,
              );
            }
          }
        }
        out.push(
          `refinement ${lang}: ${clips(TESTDATA, [lang]).slice(skip, max).length} files, ${audioS.toFixed(1)} s of audio, ${changed}/${utterances} utterances changed`,
        );
        out.push(`  base            ${base.line()}`);
        for (const [m, t] of refined) out.push(`  refined margin/votes=${m}  ${t.line()}`);
        out.push(
          `  time: base ${((baseMs / 1000 / audioS) * 60).toFixed(1)} s per audio minute, refinement adds ${((refineMs / 1000 / audioS) * 60).toFixed(1)} s per audio minute`,
        );
      }
    }
    if (!args["no-insight"]) {
      for (const modelPath of (args["insight-models"] ?? config.insight.modelPath).split(","))
        await insightBench(config, modelPath, out);
    }
  } finally {
    await engine.stop();
  }
}

await main();

async function insightBench(
  config: ReturnType<typeof loadConfig>,
  modelPath: string,
  out: { push(line: string): void },
): Promise<void> {
  const threads = args["insight-threads"] !== undefined ? Number(args["insight-threads"]) : config.insight.threads;
  const from = args["insight-from"] ? path.resolve(args["insight-from"], "src", "insight") : null;
  const Llm: typeof LocalLlm = from ? (await import(path.join(from, "local.ts"))).LocalLlm : LocalLlm;
  const generateInsight: typeof generate = from
    ? (await import(path.join(from, "index.ts"))).generateInsight
    : generate;
  const llm = new Llm({ modelPath, threads, contextSize: 4096, maxTokens: 300 });
  const ids = args["insight-ids"]?.split(",");
  const items = loadEvalSet(path.join(ROOT, "bench", "insight"), TESTDATA).filter(
    (i) => !ids || ids.some((id) => i.id.startsWith(id)),
  );
  if (args["insight-reverse"]) items.reverse();
  const cpuS = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  // Load the model and evaluate the shared prompt outside the timing: a worker does this once per process.
  let [c0, w0] = [cpuS(), Date.now()];
  await generateInsight({ utterances: items[0]!.utterances.slice(0, 1), language: items[0]!.lang }, llm, 600_000).catch(
    () => null,
  );
  out.push(
    `insight model ${path.basename(modelPath)}${from ? ` with ${from}` : ""} (threads ${threads || "auto"}): load + shared prompt ${(cpuS() - c0).toFixed(1)} s CPU, ${((Date.now() - w0) / 1000).toFixed(1)} s wall`,
  );
  let [right, facts, factsAll, failed, copies, sameTitle, n] = [0, 0, 0, 0, 0, 0, 0];
  let [compression, copy, maxCopy, cpu, wall] = [0, 0, 0, 0, 0];
  for (const item of items) {
    const transcript = transcriptOf(item.utterances);
    [c0, w0] = [cpuS(), Date.now()];
    const r = await generateInsight(
      { utterances: item.utterances, language: item.lang },
      llm,
      Number(args["insight-timeout-s"]) * 1000,
    ).then(
      (v) => ({ item: v, error: null }),
      (e: Error) => ({ item: null, error: e.message }),
    );
    const [c, w] = [cpuS() - c0, (Date.now() - w0) / 1000];
    factsAll += item.facts.length;
    const tag = `${item.id} (${transcript.length} chars, ${c.toFixed(1)} s CPU, ${w.toFixed(1)} s wall)`;
    if (item.long) out.push(`  long call ${tag}`);
    else [cpu, wall, n] = [cpu + c, wall + w, n + 1];
    if (!r.item) {
      failed++;
      out.push(`  ${tag} FAILED: ${r.error}`);
      continue;
    }
    const { title, summary, category } = r.item;
    const kept = factsKept(item, title, summary);
    const cr = copyRate(summary, transcript);
    right += category === item.category ? 1 : 0;
    facts += kept;
    compression += summary.length / transcript.length;
    copy += cr;
    maxCopy = Math.max(maxCopy, cr);
    copies += cr >= MAX_COPY_RATE ? 1 : 0;
    sameTitle += title === summary ? 1 : 0;
    out.push(
      `  ${tag} ${category === item.category ? "ok" : `WRONG (${item.category})`} facts ${kept}/${item.facts.length} copy ${cr.toFixed(2)}: ${JSON.stringify(r.item)}`,
    );
  }
  const pct = (a: number, b: number): string => `${((100 * a) / Math.max(1, b)).toFixed(1)} % (${a}/${b})`;
  const ok = items.length - failed;
  out.push(`insight ${path.basename(modelPath)}: ${items.length} transcripts, ${failed} failed`);
  out.push(`  category accuracy ${pct(right, items.length)}, key-fact recall ${pct(facts, factsAll)}`);
  out.push(
    `  compression ${(compression / Math.max(1, ok)).toFixed(2)} (summary/transcript chars, mean), copy rate mean ${(copy / Math.max(1, ok)).toFixed(2)} max ${maxCopy.toFixed(2)}, verbatim copies (>= ${MAX_COPY_RATE}) ${copies}, title = summary ${sameTitle}`,
  );
  out.push(
    `  per job (short items, n=${n}): ${(cpu / Math.max(1, n)).toFixed(1)} s CPU, ${(wall / Math.max(1, n)).toFixed(1)} s wall; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  await llm.close();
}
