// The wire shapes of a transcript, shared by every layer: declared once, in the client package
// (packages/client/src/types.ts), and given a home here so that no stage imports them from the pipeline above it.
export type { Utterance, Word } from "@sori/client";
