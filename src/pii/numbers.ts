// Structured numbers (phone, card, bank account, national id) in a transcript, by rules alone: no model, so that the
// numbers that matter most are found the same way on every deployment. Each run of digits (digits.ts) is read in
// every window of its units; a window is a number when its digits pass the type's check (checks.ts) or, for the
// numbers without a check digit, when a cue says what it is (cues.ts). Windows are taken strongest and longest
// first, so "공일공 일이삼사 오육칠팔 이 번호요" masks the phone number and not the 이 ("this") after it.
import { isCard, isKoJaPhone, isMyNumber, isNanpPhone, isRouting, isRrn, isSsn } from "./checks.js";
import { cueBefore } from "./cues.js";
import { digitRuns, type DigitUnit } from "./digits.js";
import type { Span } from "./span.js";

type NumberType = "phone" | "card" | "account" | "national_id";

/** The lengths to look at: a Japanese account number has 7 digits, a card at most 19. */
const MIN_DIGITS = 7;
const MAX_DIGITS = 19;

/** A number said right before a currency or a count is an amount, not an identifier. */
const AMOUNT_AFTER = /^\s*(?:원|円|엔|달러|만원|억|個|件|개|명|人|분|分|秒|초|%|퍼센트|dollars?|won|yen|percent|bucks)/iu;
const AMOUNT_BEFORE = /[$₩¥￥€£]\s*$/u;

/** Group sizes as said (written groups split by their separators: 010-1234-5678 → 3,4,4). */
function groups(units: readonly DigitUnit[]): number[] {
  const out: number[] = [];
  let prev: DigitUnit | null = null;
  for (const u of units) {
    const joined = prev !== null && prev.end === u.start;
    if (joined) out[out.length - 1]! += u.digits.length;
    else out.push(u.digits.length);
    prev = u;
  }
  return out;
}

const sameGroups = (g: number[], want: number[]): boolean => g.length === want.length && g.every((n, i) => n === want[i]);

/** What a window of digits is, with its strength (3: its cue says so; 2: a check digit or plan; 1: a form), or null. */
function classify(d: string, g: number[], text: string, start: number): { type: NumberType; strength: number } | null {
  const cue = cueBefore(text, start);
  if (cue === "other" || cue === "dob") return null;
  const candidates: { type: NumberType; strength: number }[] = [];
  if (isRrn(d)) candidates.push({ type: "national_id", strength: 2 });
  if (isCard(d)) candidates.push({ type: "card", strength: 2 });
  if (isKoJaPhone(d)) candidates.push({ type: "phone", strength: 2 });
  if (isNanpPhone(d)) candidates.push({ type: "phone", strength: g.length >= 3 || d.length === 11 ? 2 : 1 });
  if (isMyNumber(d)) candidates.push({ type: "national_id", strength: sameGroups(g, [4, 4, 4]) ? 2 : 0 });
  if (isSsn(d)) candidates.push({ type: "national_id", strength: sameGroups(g, [3, 2, 4]) ? 2 : 0 });
  if (isRouting(d)) candidates.push({ type: "account", strength: 0 });
  if (d.length >= 7 && d.length <= 16) candidates.push({ type: "account", strength: 0 });
  const cued = cue ? candidates.find((c) => c.type === cue) : undefined;
  if (cued) return { type: cued.type, strength: 3 };
  // A cue of another type: only a number whose digits prove their type overrides it.
  const best = candidates.filter((c) => c.strength >= (cue ? 2 : 1)).sort((a, b) => b.strength - a.strength)[0];
  return best ?? null;
}

/** The structured numbers in `text`. */
export function numberSpans(text: string): Span[] {
  const found: (Span & { strength: number; digits: number })[] = [];
  for (const run of digitRuns(text)) {
    for (let i = 0; i < run.length; i++) {
      let d = "";
      for (let j = i; j < run.length; j++) {
        d += run[j]!.digits;
        if (d.length > MAX_DIGITS) break;
        if (d.length < MIN_DIGITS) continue;
        const start = run[i]!.start;
        const end = run[j]!.end;
        if (AMOUNT_AFTER.test(text.slice(end)) || AMOUNT_BEFORE.test(text.slice(0, start))) continue;
        const c = classify(d, groups(run.slice(i, j + 1)), text, start);
        if (c) found.push({ type: c.type, start, end, value: d, strength: c.strength, digits: d.length });
      }
    }
  }
  // Strongest, then longest first; a window that overlaps one already taken is dropped.
  found.sort((a, b) => b.strength - a.strength || b.digits - a.digits || a.start - b.start);
  const taken: Span[] = [];
  for (const f of found) {
    if (taken.some((t) => f.start < t.end && t.start < f.end)) continue;
    taken.push({ type: f.type, start: f.start, end: f.end, value: f.value });
  }
  return taken.sort((a, b) => a.start - b.start);
}
