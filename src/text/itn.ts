// Stage `use_itn`: spoken forms → written forms (on), and written → spoken (off), for ko, ja and en.
// Conservative by design: a number word becomes digits only where a counter, unit or pattern says it is a number,
// so words that merely contain number syllables (일상, 이상, 삼성, 사이, 천사, 이번) stay as they are. The rules
// and their limits are listed in docs/text.md.
import { ACRONYMS } from "./data/acronyms.js";
import { regexEdits, type Edit } from "./edits.js";
import {
  EN_NUMBER_WORDS,
  formatKorean,
  KANJI,
  NATIVE_PATTERN,
  parseEnglish,
  parseNative,
  parsePositional,
  readDecimalsKo,
  readDigitsKo,
  readEnglish,
  readKanji,
  readNative,
  readSino,
  SINO,
} from "./numbers.js";

// ---------------------------------------------------------------------------------------------------- Korean

/** Counters read with Sino-Korean numbers, longest first so "개월" wins over "개". */
const SINO_COUNTERS = [
  "퍼센트",
  "프로",
  "킬로미터",
  "킬로그램",
  "센티미터",
  "밀리미터",
  "킬로",
  "미터",
  "센티",
  "밀리",
  "그램",
  "리터",
  "달러",
  "유로",
  "위안",
  "원",
  "엔",
  "년도",
  "년",
  "개월",
  "월",
  "주년",
  "주일",
  "주",
  "일",
  "시간",
  "분",
  "초",
  "호선",
  "층",
  "호",
  "번지",
  "번",
  "학년",
  "인분",
  "페이지",
  "쪽",
  "회",
  "차",
  "등",
  "위",
  "대",
  "평",
  "배",
  "명",
  "개",
  "건",
  "세",
  "박",
  "점",
].sort((a, b) => b.length - a.length);
/** Counters a one-syllable number may be written onto ("오월", "삼층"): they make no common word with a digit. */
const SAFE_ATTACHED = new Set([
  "퍼센트",
  "프로",
  "월",
  "개월",
  "호선",
  "층",
  "학년",
  "킬로",
  "미터",
  "센티",
  "달러",
  "주년",
  "년도",
  "인분",
  "페이지",
]);
/** Counters a two-syllable number with 십/백/천 may be written onto ("이십분", "오백원"). */
const MID_ATTACHED = new Set([
  ...SAFE_ATTACHED,
  "분",
  "초",
  "원",
  "일",
  "시간",
  "명",
  "개",
  "번",
  "년",
  "층",
  "세",
  "대",
]);
/** Counters read with native numbers. */
const NATIVE_COUNTERS = [
  "시간",
  "시",
  "명",
  "개",
  "살",
  "마리",
  "권",
  "잔",
  "병",
  "번",
  "장",
  "대",
  "곳",
  "군데",
  "달",
  "가지",
  "사람",
  "분",
].sort((a, b) => b.length - a.length);
/** What may follow a counter inside its word: particles and copulas ("20일입니다", "5월부터"), never a noun's rest ("분석"). */
const AFTER_COUNTER =
  /^(?:$|[^가-힣]|이|가|은|는|을|를|에|의|도|만|까지|부터|씩|째|쯤|정도|나|입|예|이에|동안|간|후|전|으로|로|과|와|랑|이랑|밖에|마다|짜리|가량|여|남짓|안|내|당|경|반|이었|였|이라|라|이면|면|이고|고|인|이나|이니|이지|지|이요|요|께|말|초|중|말)/;

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
      const digits = decimals ? `${value}.${decimals}` : formatKorean(value);
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
    )})(?=$|[^가-힣]|이|가|은|는|을|를|에|의|도|로|으로|와|과|랑|만|까지|부터|처럼|보다|하고|라|이라|예|입|에서|에게|랑)`,
  "gu",
);
function acronymEdits(text: string): Edit[] {
  return regexEdits(text, ACRONYM_RE, (m) =>
    m[1] === "아이디" && text.startsWith("어", m.index + 3) ? null : ACRONYMS[m[1]!]!,
  );
}

function koreanForward(text: string): Edit[] {
  return mergeEdits([phoneEdits(text), nativeEdits(text), sinoEdits(text), acronymEdits(text)]);
}

// Korean, written → spoken.
const NATIVE_READ = new Set([
  "시",
  "시간",
  "명",
  "개",
  "살",
  "마리",
  "권",
  "잔",
  "병",
  "번",
  "장",
  "곳",
  "군데",
  "달",
  "가지",
]);
/** Unit symbols the model writes after digits, and their readings. */
const UNIT_READINGS: Record<string, string> = {
  km: "킬로미터",
  kg: "킬로그램",
  mg: "밀리그램",
  cm: "센티미터",
  mm: "밀리미터",
  ml: "밀리리터",
  m: "미터",
  g: "그램",
  L: "리터",
  l: "리터",
  "℃": "도",
};
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

function koreanReverse(text: string): Edit[] {
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

// ---------------------------------------------------------------------------------------------------- Japanese

const JA_COUNTERS = [
  "パーセント",
  "％",
  "%",
  "円",
  "ドル",
  "ユーロ",
  "年",
  "ヶ月",
  "か月",
  "カ月",
  "月",
  "日間",
  "日",
  "時間",
  "時",
  "分",
  "秒",
  "人",
  "個",
  "回",
  "歳",
  "才",
  "本",
  "枚",
  "台",
  "件",
  "階",
  "番目",
  "番線",
  "度",
  "倍",
  "割",
  "キロ",
  "メートル",
  "センチ",
  "グラム",
  "位",
  "点",
  "冊",
  "匹",
  "頭",
  "週間",
  "号",
].sort((a, b) => b.length - a.length);
/**
 * Counters a bare 一 stays a word before (一日, 一人, 一度, 一本, 一番目, 一点, …: "one day" but also "first", "once",
 * "a little"); before every other counter it may become 1.
 */
const JA_ONE_WORDS = new Set([
  "日間",
  "日",
  "時",
  "分",
  "秒",
  "人",
  "個",
  "本",
  "台",
  "番目",
  "番線",
  "度",
  "割",
  "位",
  "点",
  "冊",
  "匹",
  "頭",
]);
const JA_RUN = new RegExp(
  `[〇零一二三四五六七八九十百千万億兆]+(?:点[〇一二三四五六七八九]+)?(${JA_COUNTERS.join("|")})`,
  "gu",
);

function japaneseForward(text: string): Edit[] {
  return regexEdits(text, JA_RUN, (m) => {
    const counter = m[1]!;
    const [intPart, decPart] = m[0].slice(0, -counter.length).split("点");
    const value = parsePositional(intPart!, KANJI);
    if (value === null) return null;
    if (intPart === "一" && JA_ONE_WORDS.has(counter)) return null;
    if (intPart === "十" && counter === "分" && !/時\s*$/.test(text.slice(0, m.index))) return null; // 十分 = enough
    const before = text.slice(Math.max(0, m.index - 1), m.index);
    if (/[一-龯]/u.test(before) && !/[時年月日]/.test(before)) return null; // inside a kanji word: 統一, 唯一
    const dec = decPart ? `.${[...decPart].map((c) => parsePositional(c, KANJI)).join("")}` : "";
    const unit = counter === "パーセント" || counter === "％" ? "%" : counter;
    return `${dec ? value : formatKorean(value, ["兆", "億", "万"], "")}${dec}${unit}`;
  });
}

const JA_NUMBER = /(?<![0-9.,])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![0-9])(%|％)?/gu;
function japaneseReverse(text: string): Edit[] {
  return regexEdits(text, JA_NUMBER, (m) => {
    const [int, dec] = m[1]!.replace(/,/g, "").split(".");
    const kanji =
      readKanji(Number(int)) + (dec ? `点${[...dec].map((d) => "〇一二三四五六七八九"[Number(d)]).join("")}` : "");
    return m[2] ? `${kanji}パーセント` : kanji;
  });
}

// ---------------------------------------------------------------------------------------------------- English

const EN_WORD = `(?:${EN_NUMBER_WORDS.join("|")})`;
const EN_RUN = new RegExp(
  `(?<![A-Za-z-])${EN_WORD}(?:(?:[ -]|,? and )${EN_WORD})*(?![A-Za-z-])( percent| per cent)?`,
  "giu",
);
const EN_UNITS = new Set(["ten"]);

function englishForward(text: string): Edit[] {
  return regexEdits(text, EN_RUN, (m) => {
    const percent = m[1] ?? "";
    const words = m[0]
      .slice(0, m[0].length - percent.length)
      .split(/[ ,-]+/)
      .filter(Boolean);
    const value = parseEnglish(words);
    if (value === null) return null;
    // A scale word alone ("billion" after digits "64 billion", "a hundred") stays a word.
    if (words.every((w) => ["hundred", "thousand", "million", "billion", "trillion"].includes(w.toLowerCase())))
      return null;
    // Spell-out style for small numbers ("one of them", "two people"), digits from ten, and always with percent.
    if (!percent && value < 10 && !EN_UNITS.has(words[0]!.toLowerCase())) return null;
    if (!percent && words.length === 1 && value < 10) return null;
    if (percent) return `${value}%`;
    // "sixty four billion" → "64 billion", as written English keeps the large scale word.
    const scale = words[words.length - 1]!.toLowerCase();
    if (words.length > 1 && ["million", "billion", "trillion"].includes(scale)) {
      const head = parseEnglish(words.slice(0, -1));
      if (head !== null && head < 1000) return `${head} ${scale}`;
    }
    return value >= 10000 ? value.toLocaleString("en-US") : String(value);
  });
}

const EN_NUMBER = /(?<![0-9.,A-Za-z])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![0-9])(%)?/g;
function englishReverse(text: string): Edit[] {
  return regexEdits(text, EN_NUMBER, (m) => {
    const [int, dec] = m[1]!.replace(/,/g, "").split(".");
    let spoken = readEnglish(Number(int));
    if (dec) spoken += ` point ${[...dec].map((d) => readEnglish(Number(d))).join(" ")}`;
    return m[2] ? `${spoken} percent` : spoken;
  });
}

// ---------------------------------------------------------------------------------------------------- the stage

/** Non-overlapping union: earlier lists win where edits overlap. */
function mergeEdits(lists: Edit[][]): Edit[] {
  const out: Edit[] = [];
  for (const e of lists.flat()) {
    if (!out.some((o) => e.start < o.end && o.start < e.end)) out.push(e);
  }
  return out.sort((a, b) => a.start - b.start);
}

/** Edits for one utterance's text in language `lang` (API code: ko, ja, en, ...). */
export function itnEdits(text: string, lang: string, on: boolean): Edit[] {
  if (lang === "ko") return on ? koreanForward(text) : koreanReverse(text);
  if (lang === "ja") return on ? japaneseForward(text) : japaneseReverse(text);
  if (lang === "en") return on ? englishForward(text) : englishReverse(text);
  return [];
}
