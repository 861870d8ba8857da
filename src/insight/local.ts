// The embedded insight model: an instruction-tuned GGUF model (default Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
// docs/enterprise.md) run in-process by node-llama-cpp with its CPU binary, prompted through the model's own chat
// template and decoding under a grammar built from the requested JSON schema, so that the answer is always JSON of
// that shape. The model and one context are loaded on first use and kept for the life of the process; requests are
// served one at a time on that context, which keeps the evaluated system prompt and worked examples (the same for
// every job, prompt.ts) so that each job only pays for its own transcript. Memory: the weights (1.1 GB, mapped)
// and two sequences of `contextSize` tokens (about 115 MB each for the 1.5B model at 4,096).
import fs from "node:fs";
import type {
  ChatHistoryItem,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
} from "node-llama-cpp";
import type { LlmBackend, LlmRequest } from "./backend.js";
import { SCHEMAS, type SchemaName } from "./schema.js";

/** Tokens evaluated per llama.cpp call, i.e. between two looks at the abort signal. */
export const BATCH_TOKENS = 64;

/**
 * DRY ("don't repeat yourself") penalty on the answer: it lowers the odds of a token that would extend a span
 * already written in the last `lastTokens` tokens. Without it the 1.5B model looped one clause of the 5-minute
 * call's summary until the length limit (docs/enterprise.md); a plain repetition penalty would punish the JSON
 * punctuation and every name written twice instead. The window (192 tokens) is about one answer, so a name or an
 * amount the answer takes from early in the transcript is not penalised.
 */
export const DRY_PENALTY = { strength: 0.8, allowedLength: 3, lastTokens: 192 } as const;

export interface LocalLlmOptions {
  modelPath: string;
  /** CPU threads for generation; 0 lets llama.cpp choose. */
  threads: number;
  contextSize: number;
  maxTokens: number;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  /** One sequence per kind of request, so that map-reduce's notes calls do not evict the item prompt's prefix. */
  sequences: Record<SchemaName, LlamaContextSequence>;
  grammars: Record<SchemaName, LlamaGrammar>;
}

export class LocalLlm implements LlmBackend {
  readonly name = "local";
  private loaded: Promise<Loaded> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LocalLlmOptions) {}

  complete(req: LlmRequest): Promise<string> {
    const run = this.queue.then(() => this.run(req));
    this.queue = run.catch(() => {});
    return run;
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => null);
    this.loaded = null;
    if (loaded) {
      await loaded.context.dispose();
      await loaded.model.dispose();
      await loaded.llama.dispose();
    }
  }

  private load(): Promise<Loaded> {
    if (!this.loaded) {
      this.loaded = (async () => {
        if (!fs.existsSync(this.opts.modelPath))
          throw new Error(`insight model not found: ${this.opts.modelPath} (make install)`);
        const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
        // build "never": only the prebuilt binaries that npm installed; nothing is downloaded or compiled at run time.
        const llama = await getLlama({
          gpu: false,
          build: "never",
          progressLogs: false,
          logLevel: LlamaLogLevel.error,
        });
        const model = await llama.loadModel({ modelPath: this.opts.modelPath });
        const context = await model.createContext({
          contextSize: this.opts.contextSize,
          sequences: 2,
          // Small batches: the abort signal is only seen between batches, so a batch is the most an abandoned
          // generation runs on (64 tokens: 3 s of one core for the 1.5B model; 22.5 tokens per CPU second
          // measured with 64 and 23.7 with 256 on the 5-minute call, bench/insight/speed.ts).
          batchSize: BATCH_TOKENS,
          ...(this.opts.threads > 0 ? { threads: this.opts.threads } : {}),
        });
        const grammars = {
          item: await llama.createGrammarForJsonSchema(SCHEMAS.item as never),
          notes: await llama.createGrammarForJsonSchema(SCHEMAS.notes as never),
        };
        const sequences = { item: context.getSequence(), notes: context.getSequence() };
        return { llama, model, context, sequences, grammars };
      })();
      this.loaded.catch(() => (this.loaded = null));
    }
    return this.loaded;
  }

  private async run(req: LlmRequest): Promise<string> {
    req.signal.throwIfAborted();
    const { sequences, grammars } = await this.load();
    const { LlamaChatSession } = await import("node-llama-cpp");
    // A new session on the kept sequence: node-llama-cpp reuses the sequence's evaluated tokens up to the first
    // one that differs, so the shared system prompt and examples are evaluated once per process.
    const session = new LlamaChatSession({ contextSequence: sequences[req.schema], autoDisposeSequence: false });
    try {
      session.setChatHistory(historyOf(req.system, req.examples));
      return await session.prompt(req.user, {
        grammar: grammars[req.schema],
        maxTokens: this.opts.maxTokens,
        temperature: req.temperature,
        ...(req.temperature > 0 ? { seed: 7 } : {}),
        dryRepeatPenalty: DRY_PENALTY,
        signal: req.signal,
      });
    } finally {
      session.dispose();
    }
  }
}

function historyOf(system: string, examples: LlmRequest["examples"]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [{ type: "system", text: system }];
  for (const ex of examples) history.push({ type: "user", text: ex.user }, { type: "model", response: [ex.assistant] });
  return history;
}
