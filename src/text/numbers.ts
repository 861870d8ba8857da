// Number words ↔ values, for ITN and its reverse. Readings of values in Korean come from es-hangul
// (numberToHangul for Sino-Korean, susa for native numbers); parsing spoken forms back has no library for
// Korean, so it is here: one positional parser serves Sino-Korean and Japanese kanji numerals alike.
import { numberToHangul, susa } from "es-hangul";

interface Numeral {
  digits: Record<string, number>;
  small: Record<string, number>; // 10, 100, 1000
  big: Record<string, number>; // 10^4, 10^8, 10^12
}

export const SINO: Numeral = {
  digits: { 영: 0, 공: 0, 일: 1, 이: 2, 삼: 3, 사: 4, 오: 5, 육: 6, 륙: 6, 칠: 7, 팔: 8, 구: 9 },
  small: { 십: 10, 백: 100, 천: 1000 },
  big: { 만: 1e4, 억: 1e8, 조: 1e12 },
};

export const KANJI: Numeral = {
  digits: { 〇: 0, 零: 0, 一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 },
  small: { 十: 10, 百: 100, 千: 1000 },
  big: { 万: 1e4, 億: 1e8, 兆: 1e12 },
};

/** "천이백만" → 12000000, "삼십오" → 35; null for anything that is not one well-formed number ("이상", "사이"). */
export function parsePositional(s: string, n: Numeral): number | null {
  const chars = [...s.replace(/\s+/g, "")];
  if (chars.length === 0) return null;
  let total = 0;
  let section = 0;
  let digit: number | null = null;
  let lastSmall = Infinity;
  let lastBig = Infinity;
  for (const c of chars) {
    if (c in n.digits) {
      if (digit !== null) return null; // "이삼": a digit string, not a number
      digit = n.digits[c]!;
      if (digit === 0 && chars.length > 1) return null;
    } else if (c in n.small) {
      const u = n.small[c]!;
      if (u >= lastSmall || digit === 1) return null; // "백십" ok, "십백" / "일십" not
      section += (digit ?? 1) * u;
      digit = null;
      lastSmall = u;
    } else if (c in n.big) {
      const u = n.big[c]!;
      if (u >= lastBig) return null;
      const head = section + (digit ?? 0);
      total += (head || 1) * u;
      section = 0;
      digit = null;
      lastSmall = Infinity;
      lastBig = u;
    } else return null;
  }
  return total + section + (digit ?? 0);
}

const NATIVE_TENS: Record<string, number> = {
  열: 10,
  스물: 20,
  스무: 20,
  서른: 30,
  마흔: 40,
  쉰: 50,
  예순: 60,
  일흔: 70,
  여든: 80,
  아흔: 90,
};
const NATIVE_UNITS: Record<string, number> = {
  하나: 1,
  한: 1,
  둘: 2,
  두: 2,
  셋: 3,
  세: 3,
  석: 3,
  서: 3,
  넷: 4,
  네: 4,
  넉: 4,
  너: 4,
  다섯: 5,
  여섯: 6,
  일곱: 7,
  여덟: 8,
  아홉: 9,
};
export const NATIVE_PATTERN = `(?:(?:${Object.keys(NATIVE_TENS).join("|")})(?:${Object.keys(NATIVE_UNITS).join("|")})?|(?:${Object.keys(NATIVE_UNITS).join("|")}))`;

/** "열두" → 12, "스무" → 20, "세" → 3. */
export function parseNative(s: string): number | null {
  for (const [t, tv] of Object.entries(NATIVE_TENS)) {
    if (s === t) return tv;
    if (s.startsWith(t)) {
      const u = NATIVE_UNITS[s.slice(t.length)];
      return u === undefined ? null : tv + u;
    }
  }
  return NATIVE_UNITS[s] ?? null;
}

/**
 * The written form of an amount: 12000000 → "1,200만", 350000000 → "3억 5,000만", 12300 → "12,300", 2024 → "2024"
 * (no comma below 10,000, so years read right). Japanese passes its own units (万, 億, 兆) and no separator.
 */
export function formatMyriads(
  v: number,
  units: readonly [string, string, string] = ["조", "억", "만"],
  sep = " ",
): string {
  if (!Number.isInteger(v) || v < 1e4) return String(v);
  if (v < 1e8 && v % 1e4 !== 0) return v.toLocaleString("en-US");
  const parts: string[] = [];
  let rest = v;
  for (const [unit, size] of [
    [units[0], 1e12],
    [units[1], 1e8],
    [units[2], 1e4],
  ] as const) {
    const q = Math.floor(rest / size);
    if (q > 0) parts.push(`${q.toLocaleString("en-US")}${unit}`);
    rest %= size;
  }
  if (rest > 0) parts.push(rest.toLocaleString("en-US"));
  return parts.join(sep);
}

/** The Sino-Korean reading, as spoken and spaced by 만 units: 10000 → "만", 25000 → "이만 오천", 0 → "영". */
export function readSino(v: number): string {
  if (v === 0) return "영";
  return numberToHangul(v, { spacing: true }).replace(/^일만/, "만");
}

/** The native reading before a counter: 2 → "두", 20 → "스무", 21 → "스물한". Only 1..99. */
export function readNative(v: number): string {
  return susa(v, true);
}

const DIGIT_READ = ["공", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"];
/** Digit by digit, as phone numbers are read: "010" → "공일공". */
export const readDigitsKo = (s: string): string => [...s].map((d) => DIGIT_READ[Number(d)] ?? d).join("");
export const readDecimalsKo = (s: string): string =>
  [...s].map((d) => (d === "0" ? "영" : (DIGIT_READ[Number(d)] ?? d))).join("");

const KANJI_DIGITS = ["〇", "一", "二", "三", "四", "五", "六", "七", "八", "九"];
/** 30 → "三十", 1200 → "千二百", 10000 → "一万". */
export function readKanji(v: number): string {
  if (v === 0) return "零";
  const section = (n: number): string => {
    let s = "";
    for (const [u, size] of [
      ["千", 1000],
      ["百", 100],
      ["十", 10],
    ] as const) {
      const q = Math.floor(n / size);
      if (q > 0) s += (q > 1 ? KANJI_DIGITS[q] : "") + u;
      n %= size;
    }
    return s + (n > 0 ? KANJI_DIGITS[n] : "");
  };
  let out = "";
  let rest = v;
  for (const [u, size] of [
    ["兆", 1e12],
    ["億", 1e8],
    ["万", 1e4],
  ] as const) {
    const q = Math.floor(rest / size);
    if (q > 0) out += section(q) + u;
    rest %= size;
  }
  return out + section(rest);
}

// English.
const EN_SMALL: Record<string, number> = {
  zero: 0,
  oh: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const EN_TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const EN_SCALE: Record<string, number> = { hundred: 100, thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };
export const EN_NUMBER_WORDS = [
  ...Object.keys(EN_SMALL).filter((w) => w !== "oh"),
  ...Object.keys(EN_TENS),
  ...Object.keys(EN_SCALE),
];

/** "twenty five" → 25, "one hundred and five" → 105, "nineteen ninety" → 1990; null when malformed. */
export function parseEnglish(words: string[]): number | null {
  const ws = words.map((w) => w.toLowerCase()).filter((w) => w !== "and");
  if (ws.length === 0) return null;
  // Years read in pairs: "nineteen ninety", "twenty twenty one".
  const pair = ws.length >= 2 && (ws[0]! in EN_TENS || (ws[0]! in EN_SMALL && EN_SMALL[ws[0]!]! >= 10));
  if (pair) {
    const head = parseEnglish([ws[0]!]);
    const tail = parseEnglish(ws.slice(1));
    if (head !== null && tail !== null && tail >= 10 && tail < 100 && !ws.slice(1).some((w) => w in EN_SCALE))
      return head * 100 + tail;
  }
  let total = 0;
  let current = 0;
  let prev: "small" | "tens" | "scale" | null = null;
  for (const w of ws) {
    if (w in EN_SMALL) {
      if (prev === "small") return null;
      if (prev === "tens" && EN_SMALL[w]! >= 10) return null;
      current += EN_SMALL[w]!;
      prev = "small";
    } else if (w in EN_TENS) {
      if (prev === "small" || prev === "tens") return null;
      current += EN_TENS[w]!;
      prev = "tens";
    } else if (w in EN_SCALE) {
      const s = EN_SCALE[w]!;
      if (s === 100) current = (current || 1) * 100;
      else {
        total += (current || 1) * s;
        current = 0;
      }
      prev = "scale";
    } else return null;
  }
  return total + current;
}

const EN_ONES = Object.entries(EN_SMALL)
  .filter(([w]) => w !== "oh")
  .map(([w]) => w);
const EN_TENS_WORDS = ["", "", ...Object.keys(EN_TENS)];
/** 25 → "twenty-five", 1200 → "one thousand two hundred". */
export function readEnglish(v: number): string {
  if (v < 20) return EN_ONES[v]!;
  if (v < 100) return EN_TENS_WORDS[Math.floor(v / 10)]! + (v % 10 ? `-${EN_ONES[v % 10]}` : "");
  if (v < 1000) return `${EN_ONES[Math.floor(v / 100)]} hundred${v % 100 ? ` ${readEnglish(v % 100)}` : ""}`;
  for (const [w, s] of [
    ["trillion", 1e12],
    ["billion", 1e9],
    ["million", 1e6],
    ["thousand", 1e3],
  ] as const) {
    if (v >= s) return `${readEnglish(Math.floor(v / s))} ${w}${v % s ? ` ${readEnglish(v % s)}` : ""}`;
  }
  return String(v);
}
