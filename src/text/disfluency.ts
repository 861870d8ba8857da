// Stage `use_disfluency_filter`: removes fillers and stutter repeats, never real words.
// A filler is a whole word from the lists in data/fillers.ts. Words that are also real words (그 "that", 저 "I",
// 뭐 "what", あの "that", まあ) count as fillers only where speech marks them so: a comma or ellipsis after them,
// a long vowel (あのー), or a repeat (그 그 그러니까).
import { AMBIGUOUS_FILLERS, FILLERS } from "./data/fillers.js";
import type { Edit } from "./edits.js";
import { escapeRegExp } from "./regex.js";

const PUNCT_AFTER = "[,，、…]|\\.\\.+";

function alternation(words: readonly string[]): string {
  return [...words]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|");
}

/** Space-separated languages (ko, en): a filler is a whole word, taken with its trailing comma and one space. */
function spacedEdits(text: string, lang: "ko" | "en"): Edit[] {
  const edits: Edit[] = [];
  const sure = alternation(FILLERS[lang]);
  const maybe = alternation(AMBIGUOUS_FILLERS[lang]);
  const flags = lang === "en" ? "giu" : "gu";
  // With punctuation after it ("어...그게") a filler needs no space before the next word.
  const re = new RegExp(`(?<=^|\\s)(?:(?:${sure}|${maybe})(?:${PUNCT_AFTER})|(?:${sure})(?=\\s|$|[.?!]))\\s*`, flags);
  for (const m of text.matchAll(re)) edits.push({ start: m.index, end: m.index + m[0].length, text: "" });
  // Stutters: a short word repeated, or cut off and restarted ("그 그 그러니까", "I I think", "저 저는").
  const word = /(?<=^|\s)(\S+?)[,、]?\s+(?=(\S+))/gu;
  for (const m of text.matchAll(word)) {
    const w = m[1]!.toLowerCase();
    const next = m[2]!.toLowerCase().replace(/[,.?!]$/, "");
    const short = lang === "ko" ? [...w].length === 1 : w.length <= 3;
    const repeat = w === next || (lang === "ko" && next.startsWith(w) && next.length > w.length);
    if (short && repeat && /^\p{L}+$/u.test(w) && !edits.some((e) => e.start <= m.index && m.index < e.end)) {
      edits.push({ start: m.index, end: m.index + m[0].length, text: "" });
    }
  }
  // A word restarted after a hesitation: "어제... 어제 학교를", "we- we did".
  for (const m of text.matchAll(/(?<=^|\s)(\p{L}+)(?:\.{2,}|…|-)\s*(?=\1(?!\p{L}))/gu)) {
    if (!edits.some((e) => m.index < e.end && e.start < m.index + m[0].length))
      edits.push({ start: m.index, end: m.index + m[0].length, text: "" });
  }
  return edits.sort((a, b) => a.start - b.start);
}

/** Japanese: no spaces, so fillers are matched where a phrase starts (text start, after punctuation or a space). */
function japaneseEdits(text: string): Edit[] {
  const sure = alternation(FILLERS.ja);
  const maybe = alternation(AMBIGUOUS_FILLERS.ja);
  const re = new RegExp(
    `(?<=^|[\\s、。！？!?])(?:(?:${sure})[ー〜]*(?:[、,…]|\\s)?|(?:${maybe})(?:ー+[、,…]?|[、,…]))\\s*`,
    "gu",
  );
  const edits: Edit[] = [];
  for (const m of text.matchAll(re)) edits.push({ start: m.index, end: m.index + m[0].length, text: "" });
  // Stutters: "わ、わたし" — one or two kana, a comma, then the word they begin.
  for (const m of text.matchAll(/(?<=^|[\s、。])([\p{Script=Hiragana}\p{Script=Katakana}]{1,2})[、,](?=\1)/gu)) {
    if (!edits.some((e) => e.start <= m.index && m.index < e.end))
      edits.push({ start: m.index, end: m.index + m[0].length, text: "" });
  }
  return edits.sort((a, b) => a.start - b.start);
}

export function disfluencyEdits(text: string, lang: string): Edit[] {
  if (lang === "ko" || lang === "en") return spacedEdits(text, lang);
  if (lang === "ja") return japaneseEdits(text);
  return [];
}

/** Decoder prompts that make Whisper write what was said, fillers included, when the filter is off (docs/text.md). */
export const VERBATIM_PROMPTS: Record<string, string> = {
  ko: "음, 그러니까 어... 그 그게 뭐냐면, 아 네, 음 제가 그 어제 말씀드린 거요.",
  ja: "えーと、あのー、まあ、その、えー、そうですね、うーん。",
  en: "So, uh, we, um, we are, uh, looking at the, um, results. Uh, yeah.",
};
