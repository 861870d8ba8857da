// Words that say what the number or date after them is: "카드 번호는", "口座番号", "social security". A number with no
// check digit (a bank account, an SSN said without dashes) is redacted only after its cue; a cue of something that is
// not personal data (an order, a tracking or a reservation number) keeps the number after it. The nearest cue before
// a number wins, so "카드는 해지했고 연락처는 010…" reads the phone number as one.

export type Cue = "phone" | "card" | "account" | "national_id" | "dob" | "other";

const CUES: [Cue, RegExp][] = [
  [
    "phone",
    /전화|연락처|연락\s?번호|휴대폰|핸드폰|(?<!쿠)폰\s?번호|휴대\s?전화|電話|携帯|連絡先|phone|cell|mobile|call\s*back|call\s+me|area\s+code|市外局番|局番|지역\s?번호|text\s+me|reach\s+me|my\s+number|전번|콜백|折り返し/giu,
  ],
  ["card", /카드|カード|card|visa|master\s?card|amex|credit|debit|クレジット/giu],
  [
    "account",
    /계좌|통장|입금|이체|예금주|은행|뱅크|새마을금고|우체국|口座|普通預金|当座|振込|振り込み|銀行|支店|account|routing|iban|checking|savings|bank/giu,
  ],
  [
    "national_id",
    /주민\s?등록|주민\s?번호|외국인\s?등록|マイナンバー|個人番号|social\s+security|social|ssn|national\s+id/giu,
  ],
  ["dob", /생년월일|생일|태어|출생|生年月日|誕生日|生まれ|birth|born|birthday|\bdob\b/giu],
  [
    "other",
    /주문|송장|차량\s?번호|고객\s?센터|콜\s?센터|대표\s?번호|サポート|カスタマー|support\s+line|customer\s+service|help\s?line|번호판|ナンバープレート|license\s+plate|운송장|접수\s?번호|예약\s?번호|상품\s?번호|모델|쿠폰|인증\s?번호|注文|受付番号|予約|伝票|追跡|型番|クーポン|認証|order|tracking|confirmation|reference|ticket|case\s+number|invoice|model|coupon|verification|promo/giu,
  ],
];

/** How far before a number its cue may be (characters of the joined transcript: about one sentence). */
export const CUE_WINDOW = 60;

/** The nearest cue ending in text[at - window, at), or null. */
export function cueBefore(text: string, at: number, window = CUE_WINDOW): Cue | null {
  return nearestCue(text, at, window)?.cue ?? null;
}

/** The nearest cue ending in text[at - window, at) and how many characters before `at` it ends, or null. */
export function nearestCue(text: string, at: number, window = CUE_WINDOW): { cue: Cue; distance: number } | null {
  const from = Math.max(0, at - window);
  const before = text.slice(from, at);
  let best: { cue: Cue; end: number } | null = null;
  for (const [cue, re] of CUES) {
    for (const m of before.matchAll(re)) {
      const end = m.index + m[0].length;
      if (!best || end > best.end || (end === best.end && cue !== "other")) best = { cue, end };
    }
  }
  return best ? { cue: best.cue, distance: before.length - best.end } : null;
}

/** Whether `cue` occurs in text[at - window, at) at all (not only as the nearest). */
export function hasCueBefore(text: string, at: number, cue: Cue, window = CUE_WINDOW): boolean {
  const before = text.slice(Math.max(0, at - window), at);
  return CUES.some(([c, re]) => c === cue && before.match(re) !== null);
}

/** How far after a number its cue may be ("… 이 카드 번호예요", "…が携帯番号です", "… that's my cell"). */
export const CUE_AFTER_WINDOW = 25;

/** The first cue starting in text[at, at + window), or null: a number named after it is said. */
export function cueAfter(text: string, at: number, window = CUE_AFTER_WINDOW): Cue | null {
  // Only in the number's own utterance: the next speaker's "주문번호는 …" names the next number.
  const after = text.slice(at, at + window).split("\n")[0]!;
  let best: { cue: Cue; start: number } | null = null;
  for (const [cue, re] of CUES) {
    for (const m of after.matchAll(re)) {
      if (!best || m.index < best.start) best = { cue, start: m.index };
    }
  }
  return best?.cue ?? null;
}
