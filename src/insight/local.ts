// The embedded insight model: a GGUF file run in-process by node-llama-cpp (llama.cpp's prebuilt CPU binary from
// npm), decoding under a grammar built from INSIGHT_JSON_SCHEMA, so that the answer is always JSON with one of the
// four categories. The model is loaded on first use and kept; calls are served one at a time (a 270M model on a
// few cores gains nothing from parallel sequences, and memory stays bounded).
import fs from "node:fs";
import type { Llama, LlamaGrammar, LlamaModel } from "node-llama-cpp";
import type { LlmBackend, LlmRequest } from "./backend.js";
import { INSIGHT_JSON_SCHEMA } from "./schema.js";

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
  grammar: LlamaGrammar;
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
      await loaded.model.dispose();
      await loaded.llama.dispose();
    }
  }

  private load(): Promise<Loaded> {
    if (!this.loaded) {
      this.loaded = (async () => {
        if (!fs.existsSync(this.opts.modelPath)) throw new Error(`insight model not found: ${this.opts.modelPath} (make install)`);
        const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
        // build "never": only the prebuilt binaries that npm installed; nothing is downloaded or compiled at run time.
        const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.error });
        const model = await llama.loadModel({ modelPath: this.opts.modelPath });
        const grammar = await llama.createGrammarForJsonSchema(INSIGHT_JSON_SCHEMA as never);
        return { llama, model, grammar };
      })();
      this.loaded.catch(() => (this.loaded = null));
    }
    return this.loaded;
  }

  private async run(req: LlmRequest): Promise<string> {
    const { model, grammar } = await this.load();
    const { LlamaChatSession } = await import("node-llama-cpp");
    const context = await model.createContext({
      contextSize: this.opts.contextSize,
      ...(this.opts.threads > 0 ? { threads: this.opts.threads } : {}),
    });
    try {
      const session = new LlamaChatSession({ contextSequence: context.getSequence(), systemPrompt: req.system });
      return await session.prompt(req.user, {
        grammar,
        maxTokens: this.opts.maxTokens,
        temperature: req.temperature,
        ...(req.temperature > 0 ? { seed: 7 } : {}),
        signal: req.signal,
      });
    } finally {
      await context.dispose();
    }
  }
}
