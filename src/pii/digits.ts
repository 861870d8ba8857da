// The digits a text says, written or spoken, each with the characters it came from: what the number rules
// (numbers.ts) read. A phone number reaches this stage as `010-1234-5678` (ITN on), `공일공 일이삼사 오육칠팔`
// (ITN off: Korean reads such numbers digit by digit), `ゼロキューゼロの…` or `four one one one…`; all of them
// become units of digits, and units that follow one another with only separators between them (spaces, dashes,
// 에/の/dash, an utterance break) form a run. Only runs are read as numbers, so a stray 이 ("this") or に
// (a particle) is a one-digit run and never a number.

import { parsePositional, SINO } from "../text/numbers.js";

export interface DigitUnit {
  digits: string;
  /** The unit's characters in the text: [start, end). */
  start: number;
  end: number;
  /** Written digits (`1234`), as opposed to spoken ones: a window never cuts inside a written group. */
  written: boolean;
}

const KO_DIGITS: Record<string, string> = {
  공: "0",
  영: "0",
  빵: "0",
  일: "1",
  이: "2",
  삼: "3",
  사: "4",
  오: "5",
  육: "6",
  륙: "6",
  칠: "7",
  팔: "8",
  구: "9",
};
/** What Korean attaches to a number read out: particles and the copula ("오육칠팔이에요", "공일공에"). Longest
 * first, so that the 이 of 이에요 is read as the copula and not as a 2. */
const KO_SUFFIXES = [
  "번이에요",
  "번입니다",
  "입니다",
  "이에요",
  "이구요",
  "이고요",
  "예요",
  "이요",
  "이고",
  "하고",
  "고요",
  "구요",
  "에요",
  "번이",
  "번",
  "이",
  "에",
  "의",
  "요",
  "고",
  "로",
  "으로",
  "은",
  "는",
  "을",
  "를",
].sort((a, b) => b.length - a.length);

const JA_READINGS: Record<string, string> = {
  ゼロ: "0",
  ぜろ: "0",
  れい: "0",
  レイ: "0",
  まる: "0",
  マル: "0",
  〇: "0",
  零: "0",
  いち: "1",
  イチ: "1",
  一: "1",
  に: "2",
  ニ: "2",
  二: "2",
  さん: "3",
  サン: "3",
  三: "3",
  よん: "4",
  ヨン: "4",
  し: "4",
  シ: "4",
  四: "4",
  ご: "5",
  ゴ: "5",
  五: "5",
  ろく: "6",
  ロク: "6",
  六: "6",
  なな: "7",
  ナナ: "7",
  しち: "7",
  シチ: "7",
  七: "7",
  はち: "8",
  ハチ: "8",
  八: "8",
  きゅう: "9",
  キュウ: "9",
  きゅー: "9",
  キュー: "9",
  く: "9",
  ク: "9",
  九: "9",
};
// Long vowels said to keep a digit's length in a rhythm ("ゼロキューゼロー", "にー", "ごー") belong to the digit.
const JA_RE = new RegExp(
  `(?:${Object.keys(JA_READINGS)
    .sort((a, b) => b.length - a.length)
    .join("|")})ー?`,
  "gu",
);

const EN_DIGITS: Record<string, string> = {
  zero: "0",
  oh: "0",
  one: "1",
  two: "2",
  three: "3",
  four: "4",
  five: "5",
  six: "6",
  seven: "7",
  eight: "8",
  nine: "9",
};
const EN_TEENS: Record<string, string> = {
  ten: "10",
  eleven: "11",
  twelve: "12",
  thirteen: "13",
  fourteen: "14",
  fifteen: "15",
  sixteen: "16",
  seventeen: "17",
  eighteen: "18",
  nineteen: "19",
};
const EN_TENS: Record<string, string> = {
  twenty: "2",
  thirty: "3",
  forty: "4",
  fifty: "5",
  sixty: "6",
  seventy: "7",
  eighty: "8",
  ninety: "9",
};
const EN_ONE = Object.keys(EN_DIGITS).join("|");
const HOMOPHONES: Record<string, string> = { to: "2", too: "2", for: "4" };
// "double five", "triple oh", "twenty three", "forty", "eight hundred", "thirteen", "five".
const EN_RE = new RegExp(
  `\\b(?:(double|triple)[\\s-]+(${EN_ONE})|(${Object.keys(EN_TENS).join("|")})(?:[\\s-]+(${Object.keys(EN_DIGITS)
    .filter((w) => w !== "zero" && w !== "oh")
    .join("|")}))?|(${Object.keys(EN_TEENS).join("|")})|(${EN_ONE})(?:[\\s-]+(hundred))?)\\b`,
  "giu",
);

function englishUnit(m: RegExpExecArray): string {
  const [, times, repeated, tens, ones, teen, one, hundred] = m;
  if (times && repeated) return EN_DIGITS[repeated.toLowerCase()]!.repeat(times.toLowerCase() === "double" ? 2 : 3);
  if (tens) return EN_TENS[tens.toLowerCase()]! + (ones ? EN_DIGITS[ones.toLowerCase()]! : "0");
  if (teen) return EN_TEENS[teen.toLowerCase()]!;
  return EN_DIGITS[(one ?? "").toLowerCase()]! + (hundred ? "00" : "");
}

/**
 * A Korean word as digits and the particle after them: "공일공에" → 010 + 에 (digit by digit), "천이백삼십사" → 1234
 * (a group of four read as a number, as many people read phone and card numbers, and as sori's reverse ITN writes
 * them); null when it is not one. Only units below 만 count, so 삼만 (30,000) stays an amount.
 */
function koreanDigits(word: string): { length: number; digits: string[] } | null {
  const bySyllable = (s: string): string[] | null =>
    s.length > 0 && [...s].every((c) => c in KO_DIGITS) ? [...s].map((c) => KO_DIGITS[c]!) : null;
  const positional = (s: string): string[] | null => {
    if (!/[십백천]/u.test(s) || /[만억조]/u.test(s)) return null;
    const v = parsePositional(s, SINO);
    return v === null ? null : [String(v)];
  };
  const read = (s: string): string[] | null => bySyllable(s) ?? positional(s);
  if (word === "이" || word === "오" || word === "구") return null; // this, oh, district: too often not a digit
  const whole = read(word);
  if (whole) return { length: word.length, digits: whole };
  // A copula or particle on its own ("734 이요", "이에요") follows a number; it is not one.
  if (KO_SUFFIXES.includes(word)) return null;
  for (const suffix of KO_SUFFIXES) {
    if (!word.endsWith(suffix)) continue;
    const digits = read(word.slice(0, -suffix.length));
    if (digits) return { length: word.length - suffix.length, digits };
  }
  return null;
}

/** Every digit unit of the text, in order. */
export function digitUnits(text: string): DigitUnit[] {
  const units: DigitUnit[] = [];
  for (const m of text.matchAll(/[0-9０-９]+/gu)) {
    const digits = m[0].replace(/[０-９]/gu, (c) => String(c.charCodeAt(0) - 0xff10));
    units.push({ digits, start: m.index, end: m.index + m[0].length, written: true });
  }
  // A Korean word counts only when it is all digit syllables (with a particle after them): 구 of 강남구 is not a 9.
  for (const m of text.matchAll(/[가-힣]+/gu)) {
    // Right after a written digit a Korean word is its counter: the 일 of "2일" is a day, not a 1.
    if (/[0-9０-９]/u.test(text[m.index - 1] ?? "")) continue;
    const k = koreanDigits(m[0]);
    if (k === null) continue;
    // Digit by digit: a unit per syllable (so a window may end before a stray 이); a number read whole: one unit.
    if (k.digits.length === 1 && k.length > 1 && !/^\d$/u.test(k.digits[0]!))
      units.push({ digits: k.digits[0]!, start: m.index, end: m.index + k.length, written: false });
    else
      k.digits.forEach((d, i) => {
        units.push({ digits: d, start: m.index + i, end: m.index + i + 1, written: false });
      });
  }
  for (const m of text.matchAll(JA_RE)) {
    units.push({
      digits: (JA_READINGS[m[0]] ?? JA_READINGS[m[0].replace(/ー$/u, "")])!,
      start: m.index,
      end: m.index + m[0].length,
      written: false,
    });
  }
  for (const m of text.matchAll(EN_RE)) {
    units.push({ digits: englishUnit(m), start: m.index, end: m.index + m[0].length, written: false });
  }
  units.sort((a, b) => a.start - b.start);
  // A recognizer writes "two" as "to" and "four" as "for" inside a number read out ("7 to 4 1 8 8", "seven oh three,
  // for five six"): such a word is a digit only between two digits, with a space (after a comma, too) on each side.
  const tight = (gap: string): boolean => /^[,，]? $/u.test(gap);
  for (const m of text.matchAll(/(?<= )(to|too|for)(?= )/giu)) {
    const before = [...units].reverse().find((u) => u.end <= m.index);
    const after = units.find((u) => u.start >= m.index + m[0].length);
    if (
      before &&
      after &&
      tight(text.slice(before.end, m.index)) &&
      tight(text.slice(m.index + m[0].length, after.start))
    )
      units.push({
        digits: HOMOPHONES[m[0].toLowerCase()]!,
        start: m.index,
        end: m.index + m[0].length,
        written: false,
      });
  }
  return units.sort((a, b) => a.start - b.start);
}

/** What may stand between two digits of one number: spaces, dashes, dots, commas (a recognizer's rhythm: "five five
 * five, one two three"), an utterance break, and the words people say between groups (Korean 에/다시, Japanese の,
 * English dash) and a filler or two (uh, 어, えー). Lists of counts are runs too, but too short to be read as any number. */
const PUNCT = /[\s\-‐‑–—.・()（）/,，、]/gu;
const JOINERS = new Set(["다시", "에", "의", "하고", "の", "ノ", "dash", "hyphen"]);
/** Fillers a caller says while reading a number out ("four one five, uh, five five five"). */
const FILLERS = new Set(["uh", "um", "er", "어", "음", "그", "えー", "えっと", "あの"]);
const isSeparator = (gap: string): boolean => {
  const words = gap
    .split(PUNCT)
    .filter((w) => w.length > 0)
    .map((w) => w.toLowerCase());
  return words.length <= 2 && words.every((w) => JOINERS.has(w) || FILLERS.has(w));
};
const MAX_GAP = 12;

/** The runs of units that read as one number: consecutive units with only a separator between them. */
export function digitRuns(text: string, units: readonly DigitUnit[] = digitUnits(text)): DigitUnit[][] {
  const runs: DigitUnit[][] = [];
  let run: DigitUnit[] = [];
  for (const u of units) {
    const prev = run[run.length - 1];
    if (prev && u.start >= prev.end) {
      const gap = text.slice(prev.end, u.start);
      if (gap.length <= MAX_GAP && isSeparator(gap)) {
        run.push(u);
        continue;
      }
    }
    if (prev && u.start < prev.end) continue; // overlapping readings: the first wins
    if (run.length > 0) runs.push(run);
    run = [u];
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
