// Structured numbers (phone, card, bank account, national id) in a transcript, by rules alone: no model, so that the
// numbers that matter most are found the same way on every deployment. Each run of digits (digits.ts) is read in
// every window of its units; a window is a number when its digits pass the type's check (checks.ts) or, for the
// numbers without a check digit, when a cue says what it is (cues.ts). Windows are taken strongest and longest
// first, so "공일공 일이삼사 오육칠팔 이 번호요" masks the phone number and not the 이 ("this") after it.
import { isCard, isKoJaPhone, isMobile, isMyNumber, isNanpPhone, isRrn, isSsn } from "./checks.js";
import { cueBefore } from "./cues.js";
import { type DigitUnit, digitRuns } from "./digits.js";
import type { Span } from "./span.js";

type NumberType = "phone" | "card" | "account" | "national_id";

/** The lengths to look at: a Japanese account number has 7 digits, a card at most 19. */
const MIN_DIGITS = 7;
const MAX_DIGITS = 19;

/** A number said right before a currency or a count is an amount, not an identifier. */
const AMOUNT_AFTER =
  /^\s*(?:원|円|엔|달러|만원|억|個|件|개|명|人|분|分|秒|초|%|퍼센트|dollars?|won|yen|percent|bucks)/iu;
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

const sameGroups = (g: number[], want: number[]): boolean =>
  g.length === want.length && g.every((n, i) => n === want[i]);

/** Cards are read in fours (Amex 4-6-5) or in one breath. */
const cardGroups = (g: number[]): boolean =>
  g.length === 1 || g.slice(0, -1).every((n) => n === 4) || sameGroups(g, [4, 6, 5]) || sameGroups(g, [4, 6, 4]);
/** North American numbers are read 3-3-4 (with a leading 1); ten digits in one breath may be anything. */
const nanpGroups = (g: number[]): boolean =>
  sameGroups(g, [3, 3, 4]) || sameGroups(g, [1, 3, 3, 4]) || sameGroups(g, [3, 7]);

/**
 * What a window of digits is, with its strength, or null. Strength 2: the digits prove it (a birth date and sex
 * digit, Luhn in a card's grouping, a mobile number, a grouped SSN or My Number); 1: a form many other numbers also
 * have (a landline, an ungrouped 10-digit number); 0: only a length (an account). A cue before
 * the number (cues.ts) decides between candidates; without one, strength 1 is enough.
 */
function classify(d: string, g: number[], text: string, start: number): { type: NumberType; strength: number } | null {
  const cue = cueBefore(text, start);
  if (cue === "other" || cue === "dob") return null;
  const candidates: { type: NumberType; strength: number }[] = [];
  if (isRrn(d)) candidates.push({ type: "national_id", strength: 2 });
  if (isCard(d)) candidates.push({ type: "card", strength: cardGroups(g) ? 2 : 1 });
  if (isKoJaPhone(d)) candidates.push({ type: "phone", strength: isMobile(d) ? 2 : 1 });
  if (isNanpPhone(d)) candidates.push({ type: "phone", strength: nanpGroups(g) ? 2 : 1 });
  if (isMyNumber(d)) candidates.push({ type: "national_id", strength: sameGroups(g, [4, 4, 4]) ? 2 : 0 });
  if (isSsn(d)) candidates.push({ type: "national_id", strength: sameGroups(g, [3, 2, 4]) ? 2 : 0 });
  if (d.length >= 7 && d.length <= 16) candidates.push({ type: "account", strength: 0 });
  candidates.sort((a, b) => b.strength - a.strength);
  // A cue names the type; a number that proves another type still wins over a cue of a type without a check
  // ("예금주는 김민수요 … 공일공 …" is a phone number, though the account's cue is nearer).
  const cued = cue ? candidates.find((c) => c.type === cue) : undefined;
  if (cued && (cued.strength >= 1 || !WITHOUT_CHECK.has(cued.type))) return { type: cued.type, strength: 3 };
  const proven = candidates.find((c) => c.strength >= 2);
  if (cued) return proven ?? { type: cued.type, strength: 1.5 };
  // A cue of another type: only a number whose digits prove their type overrides it.
  const best = candidates.find((c) => c.strength >= (cue ? 2 : 1));
  return best ?? null;
}

/** Types whose numbers have no check digit and no fixed form: found by their cue alone. */
const WITHOUT_CHECK: ReadonlySet<NumberType> = new Set(["account"]);

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
    // A country code's plus and an area code's opening bracket belong to the number.
    const start = /[(+（＋]/u.test(text[f.start - 1] ?? "") ? f.start - 1 : f.start;
    taken.push({ type: f.type, start, end: f.end, value: f.value });
  }
  return taken.sort((a, b) => a.start - b.start);
}
