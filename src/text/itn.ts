// Stage `use_itn`: spoken forms → written forms (on), and written → spoken (off), for ko, ja and en.
// Conservative by design: a number word becomes digits only where a counter, unit or pattern says it is a number,
// so words that merely contain number syllables (일상, 이상, 삼성, 사이, 천사, 이번) stay as they are. The rules
// and their limits are listed in docs/text.md.
import type { Edit } from "./edits.js";
import { englishForward, englishReverse } from "./itn/en.js";
import { japaneseForward, japaneseReverse } from "./itn/ja.js";
import { koreanForward, koreanReverse } from "./itn/ko.js";

/** Edits for one utterance's text in language `lang` (API code: ko, ja, en, ...). */
export function itnEdits(text: string, lang: string, on: boolean): Edit[] {
  if (lang === "ko") return on ? koreanForward(text) : koreanReverse(text);
  if (lang === "ja") return on ? japaneseForward(text) : japaneseReverse(text);
  if (lang === "en") return on ? englishForward(text) : englishReverse(text);
  return [];
}
