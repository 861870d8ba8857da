// An LLM that answers one chat prompt with JSON of a given schema. Two implementations: the embedded llama.cpp
// model (local.ts, the default, no server) and an OpenAI-compatible endpoint (openai.ts).
import type { ChatTurn } from "./prompt.js";
import type { SchemaName } from "./schema.js";

export interface LlmRequest {
  system: string;
  /** Worked examples, sent as earlier user/assistant turns before `user`. */
  examples: readonly ChatTurn[];
  user: string;
  /** Which JSON schema the answer must follow (INSIGHT_JSON_SCHEMA or NOTES_JSON_SCHEMA). */
  schema: SchemaName;
  temperature: number;
  signal: AbortSignal;
}

export interface LlmBackend {
  readonly name: string;
  /** The model's raw answer text; it is validated by parseInsight / parseNotes, never trusted. */
  complete(req: LlmRequest): Promise<string>;
  close(): Promise<void>;
}
