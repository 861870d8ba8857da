// Raw speed of an insight GGUF model on this machine: prompt evaluation and generation tokens per CPU second,
// single-threaded by default, with the token counts of the shared prefix (system prompt + examples) and of the
// 5-minute evaluation call, so the 30 s CPU budget for a 5-minute call can be checked against arithmetic.
//
//   nice -n 10 npx tsx bench/insight/speed.ts [--model models/x.gguf] [--threads 1] [--batch 512] [--gen 120]
import path from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { buildPrompt } from "../../src/insight/prompt.js";
import { transcriptOf } from "../../src/insight/index.js";
import { loadEvalSet } from "./evalset.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: path.join(ROOT, "models", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf") },
    threads: { type: "string", default: "1" },
    batch: { type: "string", default: "512" },
    gen: { type: "string", default: "120" },
  },
});
const cpuS = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model! });
const context = await model.createContext({
  contextSize: 4096,
  threads: Number(args.threads),
  batchSize: Number(args.batch),
});
const seq = context.getSequence();
const items = loadEvalSet(path.join(ROOT, "bench", "insight"), path.resolve(ROOT, "..", "shared", "testdata"));
const long = items.find((i) => i.long)!;
const p = buildPrompt({ transcript: transcriptOf(long.utterances), language: long.lang });
const prefix = [p.system, ...p.examples.flatMap((e) => [e.user, e.assistant])].join("\n");
const prefixTokens = model.tokenize(prefix);
const callTokens = model.tokenize(p.user);
console.log(`model ${path.basename(args.model!)} threads ${args.threads} batch ${args.batch}`);
console.log(
  `shared prefix ${prefix.length} chars = ${prefixTokens.length} tokens; 5-minute call ${p.user.length} chars = ${callTokens.length} tokens`,
);
let c0 = cpuS();
let w0 = Date.now();
await seq.evaluateWithoutGeneratingNewTokens(callTokens);
let c = cpuS() - c0;
console.log(
  `prompt eval: ${callTokens.length} tokens in ${c.toFixed(1)} s CPU (${(callTokens.length / c).toFixed(1)} tok/CPU s), ${((Date.now() - w0) / 1000).toFixed(1)} s wall`,
);
const gen = Number(args.gen);
c0 = cpuS();
w0 = Date.now();
let n = 0;
for await (const _ of seq.evaluate(model.tokenize(" The"), {})) {
  if (++n >= gen) break;
}
c = cpuS() - c0;
console.log(
  `generation: ${n} tokens in ${c.toFixed(1)} s CPU (${(n / c).toFixed(1)} tok/CPU s), ${((Date.now() - w0) / 1000).toFixed(1)} s wall`,
);
await context.dispose();
await model.dispose();
await llama.dispose();
