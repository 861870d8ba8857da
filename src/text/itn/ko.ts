// ITN for Korean: spoken → written (forward) and written → spoken (reverse); the stage is src/text/itn.ts.
import { ACRONYMS } from "../data/acronyms.js";
import {
  MID_ATTACHED,
  NATIVE_COUNTERS,
  NATIVE_READ,
  SAFE_ATTACHED,
  SINO_COUNTERS,
  UNIT_READINGS,
} from "../data/counters.js";
import { type Edit, mergeEdits, regexEdits } from "../edits.js";
import {
  formatMyriads,
  NATIVE_PATTERN,
  parseNative,
  parsePositional,
  readDecimalsKo,
  readDigitsKo,
  readNative,
  readSino,
  SINO,
} from "../numbers.js";

/** What may follow a counter inside its word: particles and copulas ("20일입니다", "5월부터"), never a noun's rest ("분석"). */
const AFTER_COUNTER =
  /^(?:$|[^가-힣]|이|가|은|는|을|를|에|의|도|만|까지|부터|씩|째|쯤|정도|나|입|예|이에|동안|간|후|전|으로|로|과|와|랑|이랑|밖에|마다|짜리|가량|여|남짓|안|내|당|경|반|이었|였|이라|라|이면|면|이고|고|인|이나|이니|이지|지|이요|요|께|말|초|중)/;

const SINO_CHARS = "영공일이삼사오육륙칠팔구십백천만억조";
const SINO_RUN = new RegExp(`(?<![가-힣0-9])[${SINO_CHARS}]+(?: [${SINO_CHARS}]+)*`, "gu");
const PHONE =
  /(?<![가-힣0-9])(공[공영일이삼사오육칠팔구]{1,2}) ?(?:에 ?|다시 ?)?([공영일이삼사오육칠팔구]{3,4}) ?(?:에 ?|다시 ?)?([공영일이삼사오육칠팔구]{4})(?=$|[^가-힣]|로|으로|이|가|은|는|을|를|에|의|도|입|예|요|이요|이에|번)/gu;

function matchCounter(rest: string, counters: readonly string[]): { counter: string; space: string } | null {
  const m = /^( ?)/.exec(rest)!;
  const after = rest.slice(m[1]!.length);
  for (const c of counters) {
    if (after.startsWith(c) && AFTER_COUNTER.test(after.slice(c.length))) return { counter: c, space: m[1]! };
  }
  return null;
}

/** Sino-Korean numbers: "삼십 퍼센트" → "30%", "이천이십사 년 삼 월" → "2024년 3월", "천이백만 원" → "1,200만 원". */
function sinoEdits(text: string): Edit[] {
  const edits: Edit[] = [];
  for (const m of text.matchAll(SINO_RUN)) {
    const chunks = m[0].split(" ");
    // The longest run of chunks that parses as one number; a space may only follow a unit ("천 이백", "삼억 오천만").
    // The last chunk may end in a counter made of number syllables ("구일" = 9 + 일).
    const candidates: string[] = [];
    for (let n = chunks.length; n >= 1; n--) {
      const parts = chunks.slice(0, n);
      if (parts.slice(0, -1).some((p) => !/[십백천만억조]$/.test(p))) continue;
      const lastChunk = [...parts[n - 1]!];
      for (let k = lastChunk.length; k >= 1; k--)
        candidates.push([...parts.slice(0, -1), lastChunk.slice(0, k).join("")].join(" "));
    }
    for (const spoken of candidates) {
      const value = parsePositional(spoken, SINO);
      if (value === null) continue;
      const start = m.index;
      let end = start + spoken.length;
      let rest = text.slice(end);
      let decimals = "";
      const dm = /^ ?점 ?([영공일이삼사오육칠팔구]+)/.exec(rest);
      if (dm && matchCounter(rest.slice(dm[0].length), SINO_COUNTERS)) {
        decimals = [...dm[1]!].map((d) => String(parsePositional(d, SINO))).join("");
        end += dm[0].length;
        rest = text.slice(end);
      }
      const syllables = spoken.replace(/ /g, "").length;
      const c = matchCounter(rest, SINO_COUNTERS);
      let ok: boolean;
      if (c) {
        const attached = c.space === "" && !decimals;
        const afterMonth = c.counter === "일" && /월 ?$/.test(text.slice(0, start));
        if (afterMonth)
          ok = true; // "오월 구일": a day of the month
        else if (spoken === "이" || (spoken === "일" && c.counter === "일"))
          ok = SAFE_ATTACHED.has(c.counter) || c.counter === "원";
        else if (!attached || decimals) ok = true;
        else if (syllables === 1) ok = SAFE_ATTACHED.has(c.counter);
        else if (syllables === 2)
          ok = /[십백천]/.test(spoken) ? MID_ATTACHED.has(c.counter) : SAFE_ATTACHED.has(c.counter);
        else ok = true;
      } else {
        // No counter: only long numbers that no word resembles ("삼십오", "천이백만"), standing alone.
        ok = !decimals && syllables >= 3 && /[십백천만억조]/.test(spoken) && /^(?:$|[^가-힣])/.test(rest);
      }
      if (!ok) continue;
      const digits = decimals ? `${value}.${decimals}` : formatMyriads(value);
      let out = digits;
      if (c) {
        const counterEnd = end + c.space.length + c.counter.length;
        const unit = c.counter === "퍼센트" || c.counter === "프로" ? "%" : c.counter;
        const space = /[만억조]$/.test(digits) && unit !== "%" ? " " : "";
        out = digits + space + unit;
        end = counterEnd;
      }
      edits.push({ start, end, text: out });
      break;
    }
  }
  return edits;
}

const NATIVE_RUN = new RegExp(`(?<![가-힣])(${NATIVE_PATTERN})( ?)(${NATIVE_COUNTERS.join("|")})`, "gu");
/** Native numbers: any with 시 (the hour: "두 시 반" → "2시 반"), from 열 up with other counters ("스무 살" → "20살"). */
function nativeEdits(text: string): Edit[] {
  return regexEdits(text, NATIVE_RUN, (m) => {
    const [, word, space, counter] = m as unknown as [string, string, string, string];
    const value = parseNative(word);
    if (value === null || !AFTER_COUNTER.test(text.slice(m.index + m[0].length))) return null;
    if (counter === "시") {
      if (value > 12 && value !== 24) return null;
      if (space === "" && ["한", "세", "네", "서", "너"].includes(word)) return null; // 한시, 세시, 네시: words of their own
    } else if (value < 10 || counter === "분" || counter === "사람") return null;
    return `${value}${counter}`;
  });
}

/** Phone numbers the model wrote as bare digits: "01012345678", "0101234-5678" → "010-1234-5678". */
const PHONE_DIGITS = /(?<![0-9.,-])(01[016789]|02|0[3-6][1-5])[- ]?(\d{3,4})[- ]?(\d{4})(?![0-9])/g;

function phoneEdits(text: string): Edit[] {
  const digits = regexEdits(text, PHONE_DIGITS, (m) => `${m[1]}-${m[2]}-${m[3]}`);
  return digits.concat(
    regexEdits(text, PHONE, (m) => {
      const groups = [m[1]!, m[2]!, m[3]!].map((g) =>
        [...g].map((c) => String(parsePositional(c, SINO) ?? 0)).join(""),
      );
      const total = groups.join("").length;
      return total >= 9 && total <= 11 ? groups.join("-") : null;
    }),
  );
}

const ACRONYM_RE = new RegExp(
  `(?<![가-힣A-Za-z])(${Object.keys(ACRONYMS)
    .sort((a, b) => b.length - a.length)
    .join(
      "|",
    )})(?=$|[^가-힣]|이|가|은|는|을|를|에|의|도|로|으로|와|과|랑|만|까지|부터|처럼|보다|하고|라|이라|예|입|에서|에게)`,
  "gu",
);
function acronymEdits(text: string): Edit[] {
  return regexEdits(text, ACRONYM_RE, (m) =>
    m[1] === "아이디" && text.startsWith("어", m.index + 3) ? null : ACRONYMS[m[1]!]!,
  );
}

export function koreanForward(text: string): Edit[] {
  return mergeEdits([phoneEdits(text), nativeEdits(text), sinoEdits(text), acronymEdits(text)]);
}

// Written → spoken.
const UNIT_SYMBOLS = Object.keys(UNIT_READINGS)
  .sort((a, b) => b.length - a.length)
  .join("|");
const KO_NUMBER = new RegExp(
  String.raw`(?<![0-9A-Za-z.,])(01[016789]|02|0[3-6][1-5])[- ]?(\d{3,4})[- ]?(\d{4})(?![0-9])|(?<![0-9A-Za-z.,])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)((?: ?[0-9,]*[만억조])*)(?![0-9])( ?)(%|(?:${UNIT_SYMBOLS})(?![A-Za-z])|[가-힣]+)?`,
  "gu",
);
const ACRONYM_REVERSE = new Map(Object.entries(ACRONYMS).map(([k, v]) => [v, k]));
const LATIN_RE = new RegExp(
  `(?<![A-Za-z])(${[...ACRONYM_REVERSE.keys()].sort((a, b) => b.length - a.length).join("|")})(?![A-Za-z])`,
  "g",
);

export function koreanReverse(text: string): Edit[] {
  const numbers = regexEdits(text, KO_NUMBER, (m) => {
    if (m[1]) return `${readDigitsKo(m[1])} ${readDigitsKo(m[2]!)} ${readDigitsKo(m[3]!)}`;
    const [, , , , num, bigPart, space, after] = m as unknown as string[];
    let spoken: string;
    const [int, dec] = num!.replace(/,/g, "").split(".");
    const value = Number(int);
    if (bigPart) {
      // "1,200만", "3억 5,000만": each group read with its unit ("천이백만", "삼억 오천만").
      const groups = `${num}${bigPart}`.replace(/,/g, "").match(/\d+(?:\.\d+)?[만억조]?/g) ?? [];
      spoken = groups
        .map((g) => readSino(Number(g.replace(/[만억조]/, ""))).replace(/ /g, "") + g.replace(/[\d.]/g, ""))
        .join(" ");
      spoken = spoken.replace(/^일만/, "만");
    } else if (dec !== undefined) spoken = `${readSino(value)} 점 ${readDecimalsKo(dec)}`;
    else {
      // Native numbers with counters that take them ("2시" → "두 시", "10명" → "열 명"), up to 99 (and 12 for 시).
      const counter = after ? NATIVE_COUNTERS.find((c) => after.startsWith(c) && NATIVE_READ.has(c)) : undefined;
      const native = counter !== undefined && value >= 1 && value <= 99 && !(counter === "시" && value > 12);
      spoken = native ? readNative(value) : readSino(value);
    }
    if (after === "%") return `${spoken} 퍼센트`;
    if (after && after in UNIT_READINGS) return `${spoken} ${UNIT_READINGS[after]}`;
    // A counter is written apart from a spelled-out number ("이십 일"), a particle or copula stays on ("십일입니다").
    if (after)
      return [...SINO_COUNTERS, ...NATIVE_COUNTERS].some((c) => after.startsWith(c))
        ? `${spoken} ${after}`
        : spoken + after;
    return spoken + space;
  });
  const latin = regexEdits(text, LATIN_RE, (m) => ACRONYM_REVERSE.get(m[1]!) ?? null);
  return mergeEdits([numbers, latin]);
}
