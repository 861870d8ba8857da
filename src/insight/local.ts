// The embedded insight model: an instruction-tuned GGUF model (default Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
// docs/enterprise.md) run in-process by node-llama-cpp with its CPU binary, prompted through the model's own chat
// template and decoding under a grammar built from the requested JSON schema, so that the answer is always JSON of
// that shape. The model and one context are loaded once and kept for the life of the process; requests are served
// one at a time on that context, which keeps the evaluated system prompt and worked examples (the same for every
// job, prompt.ts) so that each job only pays for its own transcript. prepare() does the loading and that evaluation
// when a worker starts, and keeps the evaluated state in `stateDir`, so that a restart reads it back (about a second)
// instead of evaluating the prompt again (a minute of CPU). Memory: the weights (1.1 GB, mapped) and two sequences
// of `contextSize` tokens (about 115 MB each for the 1.5B model at 4,096).
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type {
  ChatHistoryItem,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
} from "node-llama-cpp";
import type { LlmBackend, LlmRequest, SharedPrompt } from "./backend.js";
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
  /** Where prepare() keeps the evaluated shared prompts (one file per schema); none: evaluated at every start. */
  stateDir?: string | undefined;
  onLog?: (msg: string, fields?: Record<string, unknown>) => void;
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
  private prepared: Promise<void> | null = null;

  constructor(private readonly opts: LocalLlmOptions) {}

  prepare(shared: readonly SharedPrompt[]): void {
    // In the request queue, so that a job that arrives meanwhile waits for it instead of evaluating the same prompt.
    const run = this.queue.then(() => this.evaluateShared(shared));
    this.queue = run.catch(() => {});
    this.prepared = run.catch((err) => this.opts.onLog?.(`insight model not prepared: ${(err as Error).message}`));
  }

  async ready(): Promise<void> {
    await this.prepared;
    await this.load().catch(() => {}); // without prepare(): the model at least; a failure shows in complete()
  }

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
          // measured with 64 and 23.7 with 256 on the 5-minute call, bench/insight/speed.ts at fdf3214).
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

  /**
   * Puts each shared prompt's evaluated tokens on its sequence: read from `stateDir` when a file of this model, context
   * size and prompt is there, else evaluated (the prompt without an answer) and written there for the next start.
   */
  private async evaluateShared(shared: readonly SharedPrompt[]): Promise<void> {
    const started = Date.now();
    const cpu0 = process.cpuUsage();
    const { llama, sequences } = await this.load();
    const runtime = JSON.stringify(llama.llamaCppRelease);
    const loadedS = (Date.now() - started) / 1000;
    const { LlamaChatSession } = await import("node-llama-cpp");
    const sources: string[] = [];
    for (const prompt of shared) {
      const sequence = sequences[prompt.schema];
      const file = this.opts.stateDir ? path.join(this.opts.stateDir, this.stateFileName(prompt, runtime)) : null;
      if (file && fs.existsSync(file)) {
        try {
          await sequence.loadStateFromFile(file, { acceptRisk: true });
          sources.push(`${prompt.schema}: read`);
          continue;
        } catch (err) {
          this.opts.onLog?.(`insight state file not usable, evaluating again: ${(err as Error).message}`);
          await sequence.clearHistory();
        }
      }
      const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
      try {
        session.setChatHistory(historyOf(prompt.system, prompt.examples));
        await session.preloadPrompt(prompt.user);
      } finally {
        session.dispose();
      }
      sources.push(`${prompt.schema}: evaluated`);
      if (file) await this.saveState(sequence, file, prompt.schema);
    }
    const cpu = process.cpuUsage(cpu0);
    this.opts.onLog?.("insight model ready", {
      load_s: loadedS,
      wall_s: (Date.now() - started) / 1000,
      cpu_s: (cpu.user + cpu.system) / 1e6,
      shared_prompts: sources.join(", "),
    });
  }

  /** The file name says what the state is of: the model file, the context size, the prompt and the llama.cpp
   * release (a state is read back only by the runtime that wrote it: another one may crash on it). */
  private stateFileName(prompt: SharedPrompt, runtime: string): string {
    const model = fs.statSync(this.opts.modelPath);
    const key = createHash("sha256")
      .update(
        JSON.stringify([
          path.resolve(this.opts.modelPath),
          model.size,
          model.mtimeMs,
          this.opts.contextSize,
          BATCH_TOKENS,
          runtime,
          prompt.system,
          prompt.examples,
          prompt.user,
        ]),
      )
      .digest("hex")
      .slice(0, 16);
    return `${prompt.schema}-${key}.state`;
  }

  /** Written under a temporary name and renamed, so a crash mid-write never leaves a file that reads as whole;
   * older states of the same schema (another model or prompt) are removed. */
  private async saveState(sequence: LlamaContextSequence, file: string, schema: string): Promise<void> {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      await sequence.saveStateToFile(tmp);
      fs.renameSync(tmp, file);
      for (const old of fs.readdirSync(path.dirname(file))) {
        if (old.startsWith(`${schema}-`) && old !== path.basename(file)) fs.rmSync(path.join(path.dirname(file), old));
      }
    } catch (err) {
      this.opts.onLog?.(`insight state not saved: ${(err as Error).message}`);
    }
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
