// ITN for English: number words → digits (forward: from ten up, and always with percent), digits → words (reverse).
import { type Edit, mergeEdits, regexEdits } from "../edits.js";
import { EN_NUMBER_WORDS, parseEnglish, readEnglish } from "../numbers.js";
import { identifierEdits } from "./identifiers.js";

const EN_WORD = `(?:${EN_NUMBER_WORDS.join("|")})`;
const EN_RUN = new RegExp(
  `(?<![A-Za-z-])${EN_WORD}(?:(?:[ -]|,? and )${EN_WORD})*(?![A-Za-z-])( percent| per cent)?`,
  "giu",
);

export function englishForward(text: string): Edit[] {
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
    if (!percent && value < 10) return null;
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
const EN_DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
const readDigits = (d: string): string => [...d].map((c) => EN_DIGITS[Number(c)]).join(" ");

export function englishReverse(text: string): Edit[] {
  // Phone, card and account numbers digit by digit ("four one five, five five five, …"), the rest as quantities.
  const identifiers = identifierEdits(text, readDigits, ", ", "plus ");
  const numbers = regexEdits(text, EN_NUMBER, (m) => {
    const [int, dec] = m[1]!.replace(/,/g, "").split(".");
    let spoken = readEnglish(Number(int));
    if (dec) spoken += ` point ${[...dec].map((d) => readEnglish(Number(d))).join(" ")}`;
    return m[2] ? `${spoken} percent` : spoken;
  });
  return mergeEdits([identifiers, numbers]);
}
