// E-mail addresses, written (`hong@naver.com`) and spoken (`hong 골뱅이 naver 닷컴`, `john dot smith at gmail dot
// com`, `tanaka アットマーク gmail ドット コム`). A spoken address must end in a known top-level domain, so that
// "at home" or "at the office" is never one.
import type { Span } from "./span.js";

const WRITTEN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/gu;

const WORD = "[A-Za-z0-9가-힣ァ-ヴー]+";
const JOIN =
  "(?:\\s*(?:dot|점|닷|ドット|underscore|언더바|언더스코어|アンダーバー|アンダースコア|dash|hyphen|하이픈|ハイフン|[._-])\\s*)";
const LETTERS = "(?:[A-Za-z0-9](?:\\s+[A-Za-z0-9]){2,})"; // spelled out: "j o h n"
const LOCAL = `(?:${LETTERS}|${WORD})(?:${JOIN}(?:${LETTERS}|${WORD}))*`;
const AT = "\\s*(?:@|\\bat\\b|골뱅이|앳|アットマーク|アット)\\s*";
const DOT = "\\s*(?:\\bdot\\b|닷|점|ドット|\\.)\\s*";
const TLD =
  "(?:com|net|org|edu|gov|io|co|kr|jp|us|uk|me|biz|info|컴|넷|오알지|케이알|씨오|코|제이피|コム|ネット|オーグ|ジェーピー|ジェイピー|シーオー)";
const SPOKEN = new RegExp(`${LOCAL}${AT}${WORD}(?:${DOT}${WORD})*?${DOT}${TLD}(?:${DOT}${TLD})?(?![A-Za-z])`, "giu");

/** Words that end a spoken local part read backwards ("my email is dan garcia ninety two at …" starts at dan). */
const NOT_LOCAL =
  /^(?:is|it's|its|email|e-mail|address|my|me|to|the|use|and|was|please|mail|send|at|it|that|yes|sure|it’s|이메일은|메일은|주소는|이메일|は|です)$/iu;
const MAX_LOCAL_WORDS = 3;

/** The start of a spoken address's local part, taken back over up to three words before the one the pattern found. */
function localStart(text: string, start: number): number {
  let at = start;
  for (let i = 0; i < MAX_LOCAL_WORDS; i++) {
    const m = /([A-Za-z0-9가-힣ァ-ヴー]+)\s+$/u.exec(text.slice(Math.max(0, at - 40), at));
    if (!m || NOT_LOCAL.test(m[1]!)) break;
    at -= m[0].length;
  }
  return at;
}

export function emailSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const re of [WRITTEN, SPOKEN]) {
    for (const m of text.matchAll(re)) {
      const start = re === SPOKEN && /^[A-Za-z]/u.test(m[0]) ? localStart(text, m.index) : m.index;
      const end = m.index + m[0].length;
      if (!out.some((s) => start < s.end && s.start < end)) out.push({ type: "email", start, end, value: m[0] });
    }
  }
  return out;
}
