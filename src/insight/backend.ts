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

/** The part of a request that is the same for every job: what a backend can evaluate once and keep. */
export type SharedPrompt = Pick<LlmRequest, "system" | "examples" | "user" | "schema">;

export interface LlmBackend {
  readonly name: string;
  /** The model's raw answer text; it is validated by parseInsight / parseNotes, never trusted. */
  complete(req: LlmRequest): Promise<string>;
  /**
   * Starts getting ready for requests that begin like `shared` (loading a model, evaluating the shared prompt), in
   * the background, so that the first job does not pay for it. Never rejects: a failure shows in complete().
   */
  prepare?(shared: readonly SharedPrompt[]): void;
  /** Resolves once the backend can answer (what prepare started is done); a job's time limit starts after it. */
  ready?(): Promise<void>;
  close(): Promise<void>;
}
