// A piece of personal data found in a text: its type, its characters [start, end), and its value (the digits of a
// number, else the text) for the `hash` mode.
import type { PiiType } from "../domain/pii.js";

export interface Span {
  type: PiiType;
  start: number;
  end: number;
  value: string;
  /** Found by the recall layer alone (a piece after a cue, a form, a length): a date of birth or an address that
   * claims the same characters wins. */
  weak?: boolean;
}

/** Spans sorted, with every span that overlaps an earlier-listed one dropped (the caller lists the surest first). */
export function mergeSpans(lists: readonly (readonly Span[])[]): Span[] {
  const taken: Span[] = [];
  for (const list of lists)
    for (const s of list) if (!taken.some((t) => s.start < t.end && t.start < s.end)) taken.push(s);
  return taken.sort((a, b) => a.start - b.start);
}
