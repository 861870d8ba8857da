// Dates of birth: a date (written or spoken, ko/ja/en) is one only when a birth cue is near it ("생년월일이",
// "誕生日は", "date of birth", or "…에 태어났어요", "…生まれ", "born on…"), so an appointment or a delivery date is
// left alone.
import { cueBefore, hasCueBefore } from "./cues.js";
import type { Span } from "./span.js";

const KO_NUM = "(?:\\d{1,4}|[영공일이삼사오육칠팔구십백천]{1,8})";
const KO_DATE = `(?:(?:${KO_NUM})\\s*년(?:도)?\\s*)?(?:\\d{1,2}|[일이삼사오육칠팔구십]{1,3}|시|유)\\s*월\\s*(?:\\d{1,2}|[일이삼사오육칠팔구십]{1,3})\\s*일`;
const KO_YEAR_ONLY = `(?:\\d{2,4}|[일이삼사오육칠팔구십백천]{2,8})\\s*년생`;
const JA_NUM = "(?:[0-9０-９]{1,4}|[〇一二三四五六七八九十百千元]{1,6})";
const JA_DATE = `(?:(?:昭和|平成|令和|大正|西暦)\\s*)?(?:${JA_NUM}\\s*年\\s*)?${JA_NUM}\\s*月\\s*${JA_NUM}\\s*日`;
const MONTH =
  "(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?";
const ONES = "one|two|three|four|five|six|seven|eight|nine";
const ORDINAL = `(?:(?:twenty|thirty)[\\s-])?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth`;
const DAY = `(?:\\d{1,2}(?:st|nd|rd|th)?|${ORDINAL})`;
const YEAR_WORD = `(?:${ONES}|oh|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)`;
const YEAR = `(?:\\d{4}|(?:nineteen|twenty)(?:[\\s-]+(?:hundred[\\s-]+(?:and[\\s-]+)?)?${YEAR_WORD}){1,2}|two\\s+thousand(?:[\\s-]+(?:and[\\s-]+)?${YEAR_WORD}){0,2})`;
const EN_DATE = `(?:${MONTH}\\s+(?:the\\s+)?${DAY}(?:,?\\s+${YEAR})?|(?:the\\s+)?${DAY}\\s+(?:of\\s+)?${MONTH},?(?:\\s+${YEAR})?)`;
const NUMERIC =
  "(?:\\d{4}\\s*[./-]\\s*\\d{1,2}\\s*[./-]\\s*\\d{1,2}|\\d{1,2}\\s*/\\s*\\d{1,2}\\s*/\\s*\\d{2,4}|\\d{2}\\.\\d{2}\\.\\d{2}|(?:19|20)\\d{6}|\\d{6})";

const DATE = new RegExp(
  `(?<![0-9])(?:${KO_DATE}|${KO_YEAR_ONLY}|${JA_DATE}|${NUMERIC})(?![0-9])|\\b${EN_DATE}\\b`,
  "giu",
);
const BORN_AFTER = /^\s*(?:생|년생|出生|生まれ|に生まれ|の生まれ|출생)|^[^.?!。？！\n]{0,12}(?:태어났|生まれ)/u;
/** The front half of a resident registration number is the birth date: "주민번호 앞자리만". */
const RRN_FRONT = /앞\s?자리|앞\s?번호|앞\s?여섯/u;

/** Six or eight plain digits are a birth date only with the cue right before them (not an order number). */
const PLAIN_DIGITS = /^\d{6}$|^(?:19|20)\d{6}$/u;

export function dobSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(DATE)) {
    const start = m.index;
    const end = start + m[0].length;
    const cue = cueBefore(text, start, 40);
    const born = cue === "dob" || (hasCueBefore(text, start, "dob", 40) && cue !== "other");
    const plainOk = (): boolean => {
      const near = cueBefore(text, start, 30);
      return near === "dob" || (near === "national_id" && RRN_FRONT.test(text.slice(Math.max(0, start - 30), start)));
    };
    // "85년생" says "born in" itself.
    const yearOfBirth = m[0].endsWith("년생");
    if (PLAIN_DIGITS.test(m[0]) ? plainOk() : yearOfBirth || born || BORN_AFTER.test(text.slice(end)))
      out.push({ type: "dob", start, end, value: m[0] });
  }
  return out;
}
