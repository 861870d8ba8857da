// Prompt tokens the model reads per evaluation transcript, as it was (one "[spk]" line per utterance) and compacted
// (src/insight/compact.ts), with the tokenizer of the insight model (vocabulary only: no weights are read).
//
//   npx tsx bench/insight/tokens.ts [--model models/x.gguf]
import path from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { compactLines } from "../../src/insight/compact.js";
import { transcriptOf } from "../../src/insight/index.js";
import { loadEvalSet } from "./evalset.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const { values: args } = parseArgs({
  options: { model: { type: "string", default: path.join(ROOT, "models", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf") } },
});
const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model!, vocabOnly: true });
const items = loadEvalSet(path.join(ROOT, "bench", "insight"), path.resolve(ROOT, "..", "shared", "testdata"));
let [before, after] = [0, 0];
for (const item of items) {
  const b = model.tokenize(transcriptOf(item.utterances)).length;
  const a = model.tokenize(compactLines(item.utterances).join("\n")).length;
  [before, after] = [before + b, after + a];
  if (item.long || b !== a) console.log(`${item.id}: ${b} -> ${a} tokens`);
}
console.log(
  `all ${items.length} transcripts: ${before} -> ${after} tokens (${((100 * (before - after)) / before).toFixed(1)} % fewer)`,
);
await model.dispose();
await llama.dispose();
