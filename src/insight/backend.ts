// An LLM that answers one prompt with one JSON insight item (INSIGHT_JSON_SCHEMA). Two implementations: the
// embedded llama.cpp model (local.ts, the default, no server) and an OpenAI-compatible endpoint (openai.ts).
export interface LlmRequest {
  system: string;
  user: string;
  temperature: number;
  signal: AbortSignal;
}

export interface LlmBackend {
  readonly name: string;
  /** The model's raw answer text; it is validated by parseInsight, never trusted. */
  complete(req: LlmRequest): Promise<string>;
  close(): Promise<void>;
}
