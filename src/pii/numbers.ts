// Structured numbers (phone, card, bank account, national id) in a transcript, by rules alone: no model, so that the
// numbers that matter most are found the same way on every deployment. Two layers over each run of digits
// (digits.ts):
// - the exact layer reads every window of a run; a window is a number when its digits pass the type's check
//   (checks.ts) or, for the numbers without a check digit, when a cue says what it is (cues.ts). Windows are taken
//   strongest and longest first, so "공일공 일이삼사 오육칠팔 이 번호요" masks the phone number and not the 이.
// - the recall layer reads the whole run as a recognizer wrote it, digits dropped, doubled or inserted: a run
//   that a cue names (before it or just after), that has the form of a phone or card number, that continues a
//   number just masked, or that is `minDigits` long, is masked whole even when no check passes. Checks only
//   choose the type and the exact span; they never keep a number in clear.
import {
  isCard,
  isKoJaPhone,
  isMobile,
  isMyNumber,
  isNanpPhone,
  isNationwide,
  isRrn,
  isSsn,
  isTollFree,
} from "./checks.js";
import { CUE_WINDOW, type Cue, cueAfter, cueBefore, nearestCue } from "./cues.js";
import { type DigitUnit, digitRuns } from "./digits.js";
import type { Span } from "./span.js";

type NumberType = "phone" | "card" | "account" | "national_id" | "number";

/** The lengths to look at: a Japanese account number has 7 digits, a card at most 19. */
const MIN_DIGITS = 7;
const MAX_DIGITS = 19;

/** A number said right before a currency or a count is an amount, not an identifier. */
const AMOUNT_AFTER =
  /^\s*(?:원|円|엔|달러|만|억|万|億|個|件|개|건|명|人|분|分|秒|초|%|퍼센트|dollars?|won|yen|percent|bucks)/iu;
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
  // North American numbers and SSNs are not read in Korean or Japanese talk ("공일공 이칠 사오육칠" is 3-2-4).
  const american = !CJK.test(text.slice(Math.max(0, start - 30), start + d.length * 2));
  if (american && isNanpPhone(d)) candidates.push({ type: "phone", strength: nanpGroups(g) ? 2 : 1 });
  if (isMyNumber(d)) candidates.push({ type: "national_id", strength: sameGroups(g, [4, 4, 4]) ? 2 : 0 });
  if (american && isSsn(d)) candidates.push({ type: "national_id", strength: sameGroups(g, [3, 2, 4]) ? 2 : 0 });
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

const CJK = /[가-힣ぁ-ゖァ-ヺ一-龯]/u;

/** Types whose numbers have no check digit and no fixed form: found by their cue alone. */
const WITHOUT_CHECK: ReadonlySet<NumberType> = new Set(["account"]);

/** The exact layer: the windows of one run whose digits (or cue) say what they are. */
function exactSpans(text: string, run: readonly DigitUnit[]): Span[] {
  const found: (Span & { strength: number; digits: number })[] = [];
  for (let i = 0; i < run.length; i++) {
    let d = "";
    for (let j = i; j < run.length; j++) {
      d += run[j]!.digits;
      if (d.length > MAX_DIGITS) break;
      if (d.length < MIN_DIGITS) continue;
      const start = run[i]!.start;
      const end = run[j]!.end;
      if (isAmount(text, start, end)) continue;
      const c = classify(d, groups(run.slice(i, j + 1)), text, start);
      if (c) found.push({ type: c.type, start, end, value: d, strength: c.strength, digits: d.length });
    }
  }
  // Strongest, then longest first; a window that overlaps one already taken is dropped.
  found.sort((a, b) => b.strength - a.strength || b.digits - a.digits || a.start - b.start);
  const taken: Span[] = [];
  for (const f of found)
    if (!taken.some((t) => f.start < t.end && t.start < f.end))
      taken.push({ type: f.type, start: f.start, end: f.end, value: f.value });
  return taken.sort((a, b) => a.start - b.start);
}

const isAmount = (text: string, start: number, end: number): boolean =>
  AMOUNT_AFTER.test(text.slice(end)) || AMOUNT_BEFORE.test(text.slice(0, start));

/** What the recall layer needs: digits from which a run with no cue is masked (0: never by length alone). */
export interface NumberRules {
  minDigits: number;
}

/** The recall layer's tunables (lengths in digits, distances in characters of the joined transcript). */
const RECALL = {
  /** A cued run is masked from this many digits: a Japanese account number (7) with one dropped… */
  minCued: 6,
  /** …a national id from seven: six digits after an RRN cue are its front half, a birth date (dates.ts). */
  minCuedId: 7,
  /** A piece of a number broken up by misrecognized words is masked after a cue from three digits, and from two
   * right after it ("reach me at 6-1-Pemman"). */
  minPiece: 3,
  rightAfter: 16,
  /** A run of 4 digits or more starting within 24 characters after a masked number, over an utterance break, goes
   * on with it: the second half of a card read in two breaths, the agent's "네" between them. */
  minContinued: 4,
  continueWindow: 24,
  /** A piece of 2 digits or more before a number, with a reply of up to 16 characters between them ("口座番号は
   * 七六五 / はい / 四三二一です"), is that number's head. */
  minHead: 2,
  headGap: 16,
} as const;

/** …but not the last four digits asked for to check a number on file: they identify no one alone. */
const PARTIAL = /last\s+(?:four|4)|뒤\s?네\s?자리|끝\s?네\s?자리|끝자리|下4桁|下四桁/iu;
/** Readings at a run's edges that are more often words than digits (particles に, し, ご, さん; "oh"); katakana
 * digits (ニー, ゴー) are said as digits. */
const EDGE_WORDS = /^(?:に|し|く|ご|さん|oh)$/iu;
/** A date or a time written with separators, and a quantity with thousands commas: not identifiers by their form. */
const DATE_FORM = /^(?:(?:19|20)\d{2}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d{2})(?![0-9])/u;
const QUANTITY_FORM = /^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/u;
/** A date, time, count or amount word right after a leftover digit: "010-1234-5678, 3시" keeps the 3. */
const COUNTER_AFTER =
  /^(?:st|nd|rd|th)\b|^\s*(?:시|時|년|年|월|月|일|日|살|歳|번째|건|件|회|回|점|点|포인트|ポイント)|^\s*(?:o'clock|am|pm|a\.m\.|p\.m\.|points?|times|days|months|years)(?![A-Za-z])/iu;

/** The run without the word-like readings at its edges. */
function trimRun(text: string, run: readonly DigitUnit[]): DigitUnit[] {
  let i = 0;
  let j = run.length;
  // A particle is trimmed next to digits of another script ("携帯に090…"), not among kana digits ("にさんよんご").
  const kana = (u: DigitUnit | undefined): boolean =>
    u !== undefined && /^[ぁ-ゖァ-ヺー]+$/u.test(text.slice(u.start, u.end));
  const edge = (u: DigitUnit, next: DigitUnit | undefined): boolean => {
    const said = text.slice(u.start, u.end);
    return !u.written && EDGE_WORDS.test(said) && !(/^[ぁ-ゖ]/u.test(said) && kana(next));
  };
  while (i < j && edge(run[i]!, run[i + 1])) i++;
  while (j > i && edge(run[j - 1]!, run[j - 2])) j--;
  return run.slice(i, j);
}

/** The type a run's form suggests with no cue (the checks may fail: digits dropped or added), or null. */
function formOf(d: string, rules: NumberRules): NumberType | null {
  if (isTollFree(d)) return null; // a business's line
  if (/^(?:0[1-9]|82|81)/u.test(d) && d.length >= 9 && d.length <= 13) return "phone";
  if (/^[2-69]/u.test(d) && d.length >= 13 && d.length <= 21) return "card";
  if (rules.minDigits === 0 || d.length < rules.minDigits) return null;
  if (/^1?[2-9]/u.test(d) && (d.length === 10 || (d.length === 11 && d[0] === "1"))) return "phone";
  return "number";
}

const PII_CUES: ReadonlySet<Cue> = new Set(["phone", "card", "account", "national_id"]);

/** The recall layer's type for a run with no exact span, or null to keep it. */
function recallType(
  text: string,
  run: readonly DigitUnit[],
  d: string,
  last: { end: number; type: NumberType } | null,
  rules: NumberRules,
): NumberType | null {
  const start = run[0]!.start;
  const end = run[run.length - 1]!.end;
  const said = text.slice(start, end);
  if (DATE_FORM.test(said)) return null;
  const cue = cueBefore(text, start) ?? cueAfter(text, end);
  if (cue === "other" || cue === "dob") return null;
  // A business's line stays even where a phone cue is near ("문의는 1577-8899 … 연락처 남겨 주세요").
  if ((cue === "phone" || cue === null) && isNationwide(d)) return null;
  if (cue && PII_CUES.has(cue)) {
    if (d.length >= (cue === "national_id" ? RECALL.minCuedId : RECALL.minCued)) return cue as NumberType;
    // What is left of a number the recognizer broke up ("164-9-Pemman", "Macat415. Time 2671"): a few digits
    // right after the cue, unless they count something.
    const counted = QUANTITY_FORM.test(said) || COUNTER_AFTER.test(text.slice(end)) || isAmount(text, start, end);
    const birthDate = cue === "national_id" && d.length === 6;
    const year = /^(?:19|20)\d\d$/u.test(d);
    const partial = PARTIAL.test(text.slice(Math.max(0, start - CUE_WINDOW), start));
    const rightAfter = (nearestCue(text, start)?.distance ?? CUE_WINDOW) <= RECALL.rightAfter;
    const piece = d.length >= RECALL.minPiece || (d.length === 2 && rightAfter);
    if (piece && !counted && !birthDate && !year && !partial) return cue as NumberType;
  }
  if (QUANTITY_FORM.test(said) || COUNTER_AFTER.test(text.slice(end))) return null;
  if (
    last &&
    start - last.end <= RECALL.continueWindow &&
    d.length >= RECALL.minContinued &&
    text.slice(last.end, start).includes("\n")
  )
    return last.type;
  return formOf(d, rules);
}

/** The structured numbers in `text`. */
export function numberSpans(text: string, rules: NumberRules): Span[] {
  const out: Span[] = [];
  let last: { end: number; type: NumberType } | null = null;
  let kept: { run: DigitUnit[]; d: string } | null = null;
  const pending = digitRuns(text);
  while (pending.length > 0) {
    const whole = pending.shift()!;
    const run = trimRun(text, whole);
    if (run.length === 0) continue;
    const d = run.map((u) => u.digits).join("");
    const start = run[0]!.start;
    const end = run[run.length - 1]!.end;
    // A run that goes on over an utterance break into an amount ("… 4048123456781234 / 89,000원 결제되었습니다")
    // is two numbers: the amount after the last break, and what was said before it.
    if (isAmount(text, start, end)) {
      const cut = lastBreak(text, run);
      if (cut > 0) {
        pending.unshift(run.slice(0, cut), run.slice(cut));
        continue;
      }
    }
    const exact = exactSpans(text, whole);
    // A short piece just before this run with a reply between them ("口座番号は 七六五 / はい / 四三二一です").
    const headStart = kept ? kept.run[0]!.start : 0;
    const headEnd = kept ? kept.run[kept.run.length - 1]!.end : 0;
    const afterReply = kept !== null && start - headEnd <= RECALL.headGap && text.slice(headEnd, start).includes("\n");
    let spans: Span[];
    let joined = false;
    // An amount ("1,250,000원", "$4,500") is read by the exact layer alone, which keeps it.
    if (isAmount(text, start, end)) spans = exact;
    else if (exact.length > 0) spans = extend(text, run, exact);
    else {
      let type = recallType(text, run, d, last, rules);
      // Two pieces too short alone are read as one number, and then the head is part of it whatever the cue.
      if (!type && afterReply && kept) {
        const both = recallType(text, [...kept.run, ...run], kept.d + d, null, rules);
        if (both !== "number") type = both;
        joined = type !== null;
      }
      spans = type ? [{ type, start, end, value: d, weak: true }] : [];
    }
    const first = spans[0];
    const head = joined || cueBefore(text, headStart) === first?.type;
    if (first && kept && afterReply && head && !isAmount(text, headStart, headEnd))
      out.push({ type: first.type, start: headStart, end: headEnd, value: kept.d, weak: true });
    // Another number between a masked one and this run ends the continuation ("12가 3456" after a phone number).
    if (spans.length === 0 && d.length >= 2) last = null;
    kept = spans.length === 0 && d.length >= RECALL.minHead ? { run, d } : null;
    for (const s of spans) {
      // A country code's plus and an area code's opening bracket belong to the number.
      if (/[(+（＋]/u.test(text[s.start - 1] ?? "")) s.start -= 1;
      out.push(s);
      last = { end: s.end, type: s.type as NumberType };
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/** The index of the unit after the run's last utterance break, or 0. */
function lastBreak(text: string, run: readonly DigitUnit[]): number {
  for (let i = run.length - 1; i > 0; i--) if (text.slice(run[i - 1]!.end, run[i]!.start).includes("\n")) return i;
  return 0;
}

/** The exact spans of a run grown over its leftover digits (a doubled or inserted digit, a group the checks could
 * not place), each leftover joining the span before it (or after it, at the run's head). */
function extend(text: string, run: readonly DigitUnit[], exact: Span[]): Span[] {
  const spans = exact.map((s) => ({ ...s }));
  for (const u of run) {
    if (spans.some((s) => s.start <= u.start && u.end <= s.end)) continue;
    if (COUNTER_AFTER.test(text.slice(u.end))) continue;
    const before = spans.filter((s) => s.end <= u.start).pop();
    const target = before ?? spans.find((s) => s.start >= u.end);
    if (!target) continue;
    // Only what lies between the span and this unit: no other span may be crossed.
    const from = Math.min(target.start, u.start);
    const to = Math.max(target.end, u.end);
    if (spans.some((s) => s !== target && s.start < to && from < s.end)) continue;
    target.start = from;
    target.end = to;
  }
  for (const s of spans)
    s.value = run
      .filter((u) => s.start <= u.start && u.end <= s.end)
      .map((u) => u.digits)
      .join("");
  return spans;
}
