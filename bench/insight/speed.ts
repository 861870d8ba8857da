// Raw speed of an insight GGUF model on this machine: prompt evaluation and generation tokens per CPU second,
// single-threaded by default, with the token counts of the shared prefix (system prompt + examples) and of the
// 5-minute evaluation call, so the 30 s CPU budget for a 5-minute call can be checked against arithmetic. Each
// comma-separated --batch / --flash / --kv value is measured in turn on the same loaded model (a fresh context
// each), and the llama.cpp CPU backend variant that node-llama-cpp loaded (libggml-cpu-<arch>.so) is printed.
//
//   nice -n 10 npx tsx bench/insight/speed.ts [--model models/x.gguf] [--threads 1] [--batch 64,512]
//       [--flash auto,false] [--kv f16,q8_0] [--gen 40] [--compact]
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { transcriptLines } from "../../src/insight/index.js";
import { buildPrompt } from "../../src/insight/prompt.js";
import { loadEvalSet } from "./evalset.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: path.join(ROOT, "models", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf") },
    threads: { type: "string", default: "1" },
    batch: { type: "string", default: "64" },
    flash: { type: "string", default: "auto" },
    kv: { type: "string", default: "f16" },
    gen: { type: "string", default: "40" },
  },
});
const cpuS = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model! });
// Which of the prebuilt CPU kernels (one .so per x86 level) the process mapped: the best one this CPU supports.
const variants = new Set(fs.readFileSync("/proc/self/maps", "utf8").match(/libggml-cpu-[\w-]+\.so/gu) ?? []);
const items = loadEvalSet(path.join(ROOT, "bench", "insight"), path.resolve(ROOT, "..", "shared", "testdata"));
const long = items.find((i) => i.long)!;
const p = buildPrompt({ transcript: transcriptLines(long.utterances).join("\n"), language: long.lang });
const prefix = [p.system, ...p.examples.flatMap((e) => [e.user, e.assistant])].join("\n");
const callTokens = model.tokenize(p.user);
console.log(`model ${path.basename(args.model!)} threads ${args.threads}; CPU backend ${[...variants].join(", ")}`);
console.log(
  `shared prefix ${prefix.length} chars = ${model.tokenize(prefix).length} tokens; 5-minute call ${p.user.length} chars = ${callTokens.length} tokens`,
);
for (const batch of args.batch!.split(","))
  for (const flash of args.flash!.split(","))
    for (const kv of args.kv!.split(",")) {
      const context = await model.createContext({
        contextSize: 4096,
        threads: Number(args.threads),
        batchSize: Number(batch),
        flashAttention: flash === "auto" ? "auto" : flash === "true",
        experimentalKvCacheKeyType: kv as never,
        experimentalKvCacheValueType: kv as never,
      });
      const seq = context.getSequence();
      let c0 = cpuS();
      let w0 = Date.now();
      await seq.evaluateWithoutGeneratingNewTokens(callTokens);
      const pc = cpuS() - c0;
      const pw = (Date.now() - w0) / 1000;
      c0 = cpuS();
      w0 = Date.now();
      let n = 0;
      const gen = Number(args.gen);
      for await (const _ of seq.evaluate(model.tokenize(" The"), {})) if (++n >= gen) break;
      const gc = cpuS() - c0;
      console.log(
        `batch ${batch} flash ${flash} kv ${kv}: prompt ${callTokens.length} tokens ${pc.toFixed(1)} s CPU (${(callTokens.length / pc).toFixed(1)} tok/CPU s, ${pw.toFixed(1)} s wall); generation ${n} tokens ${gc.toFixed(1)} s CPU (${(n / gc).toFixed(1)} tok/CPU s, ${((Date.now() - w0) / 1000).toFixed(1)} s wall)`,
      );
      await context.dispose();
    }
await model.dispose();
await llama.dispose();
