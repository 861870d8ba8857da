// An OpenAI-compatible chat-completions endpoint (a vLLM, llama.cpp server, Ollama or hosted model) for operators
// who run a bigger model. The schema is sent as a strict json_schema response format; the answer is validated by
// parseInsight all the same, since not every server enforces it.
import type { LlmBackend, LlmRequest } from "./backend.js";
import { SCHEMAS } from "./schema.js";

export interface OpenAiOptions {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  maxTokens: number;
}

export class OpenAiLlm implements LlmBackend {
  readonly name = "openai";

  constructor(private readonly opts: OpenAiOptions) {}

  async complete(req: LlmRequest): Promise<string> {
    const url = `${this.opts.baseUrl.replace(/\/+$/u, "")}/chat/completions`;
    const r = await fetch(url, {
      method: "POST",
      signal: req.signal,
      headers: {
        "content-type": "application/json",
        ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: this.opts.model,
        temperature: req.temperature,
        max_tokens: this.opts.maxTokens,
        messages: [
          { role: "system", content: req.system },
          ...req.examples.flatMap((ex) => [
            { role: "user", content: ex.user },
            { role: "assistant", content: ex.assistant },
          ]),
          { role: "user", content: req.user },
        ],
        response_format: {
          type: "json_schema",
          json_schema: { name: req.schema, strict: true, schema: SCHEMAS[req.schema] },
        },
      }),
    });
    if (!r.ok) throw new Error(`insight endpoint answered HTTP ${r.status}`);
    const body = (await r.json()) as { choices?: { message?: { content?: unknown } }[] };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== "string") throw new Error("insight endpoint answered without message content");
    return content;
  }

  async close(): Promise<void> {}
}
