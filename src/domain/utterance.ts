// The wire shapes of a transcript, shared by every layer: declared once, in the client package
// (packages/client/src/types.ts), and given a home here so that no stage imports them from the pipeline above it.
import type { Utterance as WireUtterance } from "@sori/client";

export type { Word } from "@sori/client";
/** `spk_name` (known speakers, docs/speakers.md) is declared in the client package too; named here as well so that
 * the service type-checks against a client package built before it. */
export type Utterance = WireUtterance & { spk_name?: string };
