// E-mail addresses, written (`hong@naver.com`) and spoken (`hong 골뱅이 naver 닷컴`, `john dot smith at gmail dot
// com`, `tanaka アットマーク gmail ドット コム`). A spoken address must end in a known top-level domain, so that
// "at home" or "at the office" is never one.
import type { Span } from "./span.js";

const WRITTEN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/gu;

const WORD = "[A-Za-z0-9가-힣ァ-ヴー]+";
const JOIN = "(?:\\s*(?:dot|점|닷|ドット|underscore|언더바|언더스코어|アンダーバー|アンダースコア|dash|hyphen|하이픈|ハイフン|[._-])\\s*)";
const LETTERS = "(?:[A-Za-z0-9](?:\\s+[A-Za-z0-9]){2,})"; // spelled out: "j o h n"
const LOCAL = `(?:${LETTERS}|${WORD})(?:${JOIN}(?:${LETTERS}|${WORD}))*`;
const AT = "\\s*(?:@|\\bat\\b|골뱅이|앳|アットマーク|アット)\\s*";
const DOT = "\\s*(?:\\bdot\\b|닷|점|ドット|\\.)\\s*";
const TLD =
  "(?:com|net|org|edu|gov|io|co|kr|jp|us|uk|me|biz|info|컴|넷|오알지|케이알|씨오|코|제이피|コム|ネット|オーグ|ジェーピー|ジェイピー|シーオー)";
const SPOKEN = new RegExp(`${LOCAL}${AT}${WORD}(?:${DOT}${WORD})*?${DOT}${TLD}(?:${DOT}${TLD})?(?![A-Za-z])`, "giu");

export function emailSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const re of [WRITTEN, SPOKEN]) {
    for (const m of text.matchAll(re)) {
      const start = m.index;
      const end = start + m[0].length;
      if (!out.some((s) => start < s.end && s.start < end)) out.push({ type: "email", start, end, value: m[0] });
    }
  }
  return out;
}
