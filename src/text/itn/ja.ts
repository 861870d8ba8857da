// ITN for Japanese: kanji numerals with a counter → digits (forward), digits → kanji numerals (reverse).
import { JA_COUNTERS, JA_ONE_WORDS } from "../data/counters.js";
import { type Edit, mergeEdits, regexEdits } from "../edits.js";
import { formatMyriads, KANJI, parsePositional, readKanji } from "../numbers.js";
import { identifierEdits } from "./identifiers.js";

const JA_RUN = new RegExp(
  `[〇零一二三四五六七八九十百千万億兆]+(?:点[〇一二三四五六七八九]+)?(${JA_COUNTERS.join("|")})`,
  "gu",
);

export function japaneseForward(text: string): Edit[] {
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
    return `${dec ? value : formatMyriads(value, ["兆", "億", "万"], "")}${dec}${unit}`;
  });
}

const JA_NUMBER = /(?<![0-9.,])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![0-9])(%|％)?/gu;
const readDigits = (d: string): string => [...d].map((c) => "〇一二三四五六七八九"[Number(c)]).join("");

export function japaneseReverse(text: string): Edit[] {
  // Phone, card and account numbers digit by digit, groups joined with の as they are said ("〇九〇の一二三四の…").
  const identifiers = identifierEdits(text, readDigits, "の", "プラス");
  const numbers = regexEdits(text, JA_NUMBER, (m) => {
    const [int, dec] = m[1]!.replace(/,/g, "").split(".");
    const kanji =
      readKanji(Number(int)) + (dec ? `点${[...dec].map((d) => "〇一二三四五六七八九"[Number(d)]).join("")}` : "");
    return m[2] ? `${kanji}パーセント` : kanji;
  });
  return mergeEdits([identifiers, numbers]);
}
