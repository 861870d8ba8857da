// The redaction stage (`use_pii_redaction`, docs/pii.md): utterances in, the same utterances with every piece of
// personal data replaced, out. It runs on the pipeline's finished utterances (after ITN and the paragraph
// splitter), so it sees the text exactly as a client would, and everything made from them afterwards (insight,
// exports, the OpenAI route, refinement's input) sees only the redacted text. Words are redacted with their text:
// the words a span covers become one word, `[PHONE]`, timed from the first one's start to the last one's end, so
// neither `msg` nor `words` keeps a digit of it.
import { createHmac } from "node:crypto";
import type { PiiOptions, PiiType } from "../domain/pii.js";
import type { Utterance } from "../domain/utterance.js";
import { applyEdits, applyEditsToString, type Edit, joinTokens } from "../text/edits.js";
import { toTokens } from "../text/index.js";
import { detectPii } from "./detect.js";
import type { Span } from "./span.js";

export { detectPii } from "./detect.js";
export type { Span } from "./span.js";

/** What one job's redaction needs: the options, and for `hash` a key made for the job (never stored). */
export interface Redaction extends PiiOptions {
  key: Buffer;
}

/** Utterances are joined with a line break: a separator for the number rules, a break for every other rule. */
const JOIN = "\n";

function replacement(span: Span, piece: string, r: Redaction): string {
  const label = span.type.toUpperCase();
  switch (r.mode) {
    case "asterisks":
      return piece.replace(/\S/gu, "*");
    case "hash": {
      const value = /^\d+$/u.test(span.value) ? span.value : span.value.toLowerCase().replace(/\s+/gu, " ");
      const tag = createHmac("sha256", r.key).update(`${span.type}:${value}`).digest("hex").slice(0, 8);
      return `[${label}:${tag}]`;
    }
    case "mask":
      return `[${label}]`;
  }
}

/** Edits for text[from, to) (one utterance of the joined text) from the spans that reach into it. */
function editsWithin(text: string, spans: readonly Span[], from: number, to: number, r: Redaction): Edit[] {
  const edits: Edit[] = [];
  for (const s of spans) {
    const start = Math.max(s.start, from);
    const end = Math.min(s.end, to);
    if (end <= start) continue;
    edits.push({ start: start - from, end: end - from, text: replacement(s, text.slice(start, end), r) });
  }
  return edits;
}

const types = (r: Redaction): ReadonlySet<PiiType> => new Set(r.types);

/** Where a redacted span was said: from its first word's start to its last word's end (milliseconds), and by whom
 * (`spk`: the channel of a use_multi_channel job). For the redacted copy of the audio (src/pii/audio.ts). */
export interface SaidSpan {
  spk: number;
  start_ms: number;
  end_ms: number;
}

/** The times of the words each edit touches (a digit glued to a word takes the whole word's time). */
function saidSpans(u: Utterance, edits: readonly Edit[]): SaidSpan[] {
  const tokens = toTokens(u);
  const said: SaidSpan[] = [];
  for (const e of edits) {
    let at = 0;
    let start = Infinity;
    let end = -Infinity;
    for (const t of tokens) {
      const from = at;
      at += t.text.length;
      if (from < e.end && e.start < at) {
        start = Math.min(start, t.start_at);
        end = Math.max(end, t.start_at + t.duration);
      }
    }
    if (start <= end) said.push({ spk: u.spk, start_ms: start, end_ms: end });
  }
  return said;
}

export function redactUtterances(utterances: readonly Utterance[], r: Redaction): Utterance[] {
  return redactWithTimes(utterances, r).utterances;
}

/** `redactUtterances`, and where in the audio each redacted span was said. */
export function redactWithTimes(
  utterances: readonly Utterance[],
  r: Redaction,
): { utterances: Utterance[]; said: SaidSpan[] } {
  const text = utterances.map((u) => u.msg).join(JOIN);
  const spans = detectPii(text, types(r), r.min_digits);
  const said: SaidSpan[] = [];
  let at = 0;
  const redacted = utterances.map((u) => {
    const from = at;
    at += u.msg.length + JOIN.length;
    const edits = editsWithin(text, spans, from, from + u.msg.length, r);
    if (edits.length === 0) return u;
    said.push(...saidSpans(u, edits));
    if (!u.words) return { ...u, msg: applyEditsToString(u.msg, edits) };
    // The words carry the text's characters (toTokens aligns them with msg), so one set of edits redacts both.
    const tokens = applyEdits(toTokens(u), edits);
    const words = tokens
      .map((t) => ({ start_at: t.start_at, duration: t.duration, text: t.text.trim() }))
      .filter((w) => w.text.length > 0);
    return { ...u, msg: joinTokens(tokens), words };
  });
  return { utterances: redacted, said };
}

/** A free text (an insight item) redacted on its own. */
export function redactText(text: string, r: Redaction): string {
  const spans = detectPii(text, types(r), r.min_digits);
  return applyEditsToString(text, editsWithin(text, spans, 0, text.length, r));
}
