// Person names, by the words calls put around them: Korean honorifics after a name (김민수 고객님, 민수 씨) and
// introductions (저는 김민수입니다, 성함이 김민수요, 예금주는 김민수); Japanese honorifics (田中様, 山田さん) and
// introductions (田中と申します, 名前は田中です); English introductions and titles (my name is Sarah Kim, this is
// John, Mr. Park, the name on the card is…). Korean names must start with a common surname. Rules, not a model:
// docs/pii.md says why and what they miss.
import type { Span } from "./span.js";

// The surnames that cover nearly all Koreans (statistics Korea's census list, the common ones), two-syllable first.
const KO_SURNAMES =
  "남궁|황보|제갈|선우|독고|김|이|박|최|정|강|조|윤|장|임|한|오|서|신|권|황|안|송|류|유|전|홍|고|문|양|손|배|백|허|남|심|노|하|곽|성|차|주|우|구|민|진|나|지|엄|채|원|천|방|공|현|함|변|염|여|추|도|소|석|선|설|마|길|연|위|표|명|기|반|왕|금|옥|육|인|맹|제|모|탁|국|어|은|편|용|예|경|봉|사|부|태|목|형|피|두|감|음|빈|동|온|호|범|좌|팽|승|간|상|갈|단|견|당";
const KO_NAME = `(?:${KO_SURNAMES})[가-힣]{1,2}`;
const KO_HONORIFIC = "(?:\\s?(?:고객님|회원님|선생님|님|씨)(?![가-힣]))";
// 저는/제 이름은/성함은/예금주는/본인은 ... name, then the end of the word (a copula or a particle, or nothing).
const KO_INTRO = `(?:저는|전|제\\s?이름은|이름은|이름이|성함은|성함이|성함|예금주는|예금주|예금주가|명의는|본인|가입자는|가입자)\\s+`;
const KO_AFTER =
  "(?=(?:입니다|이에요|예요|이고요|고요|이요|요|이고|이구요|이라고|라고|으로|로|이|가|님|씨|고객님|[.,?!]|$))";
const KO = new RegExp(`(?<![가-힣])${KO_NAME}(?=${KO_HONORIFIC})|(?<=${KO_INTRO})${KO_NAME}${KO_AFTER}`, "gu");
// An answer to "성함이요?": a name that opens an utterance or a sentence, checked against the question (below).
const KO_ANSWER = new RegExp(
  `(?<=(?:^|\\n|[.?!]\\s)(?:네[,.]?\\s)?)${KO_NAME}(?=입니다|이에요|예요|이고요|고요|이요|요|[.,]|\\s\\d|$|\\n)`,
  "gmu",
);
// Words that look like a surname and a syllable or two before 님/씨 and are not names.
const KO_NOT_NAMES = new Set([
  "고객",
  "회원",
  "선생",
  "사장",
  "기사",
  "부장",
  "과장",
  "이사",
  "원장",
  "지점장",
  "상담",
  "손님",
  "주인",
  "부인",
  "아드",
  "따님",
  "이분",
  "그분",
  "저분",
  "이번",
  "안녕",
  "감사",
  "정말",
  "정도",
  "이제",
  "지금",
  "조금",
  "전화",
  "본인",
  "명의",
  "이름",
  "성함",
  "우리",
  "우선",
  "여기",
  "거기",
  "고객",
  "성함은",
  "성함이",
  "이름은",
  "이름이",
  "어떻게",
  "어떤",
  "이상",
  "정확",
  "정확히",
  "주소",
  "주소는",
  "주소가",
  "전화번호",
  "연락처",
  "유효기간",
  "신한은행",
  "국민은행",
  "우리은행",
  "하나은행",
  "기업은행",
  "농협",
  "카카오뱅크",
]);

const JA_NAME =
  "[一-龥々]{1,3}[ぁ-ん]{2,3}(?=様|さま|さん)|[一-龥々]{1,4}(?:\\s?[一-龥々]{1,4})?|[ァ-ヶー]{2,8}(?:\\s?[ァ-ヶー]{2,8})?";
const JA_ANSWER = new RegExp(`(?<=(?:^|\\n|[。、]\\s?)(?:はい、)?)(?:${JA_NAME})(?=です|と申|。|、|$)`, "gmu");
const JA = new RegExp(
  `(?:${JA_NAME})(?=\\s?(?:様|さま|さん|くん|君|氏|と申します|といいます|と言います))|(?<=(?:名前は|名義は|名義人は|氏名は|私は|わたくし|私、)\\s?)(?:${JA_NAME})`,
  "gu",
);
const JA_NOT_NAMES = new Set([
  "患者",
  "契約者",
  "被保険者",
  "申込者",
  "お申込者",
  "受取人",
  "名義人",
  "利用者",
  "担当者",
  "加入者",
  "ご本人",
  "本日",
  "明日",
  "来週",
  "以前",
  "現在",
  "はい",
  "名義",
  "型番",
  "価格",
  "送料",
  "暗証番号",
  "解約金",
  "月額",
  "被害額",
  "請求額",
  "返金額",
  "お客",
  "客",
  "皆",
  "奥",
  "神",
  "王",
  "様々",
  "お子",
  "息子",
  "娘",
  "先生",
  "担当",
  "本人",
  "私",
  "名前",
  "確認",
  "以上",
  "大丈夫",
  "結構",
  "失礼",
  "申し訳",
  "東京",
  "大阪",
  "住所",
  "番号",
  "電話",
  "今日",
  "明日",
  "今回",
  "登録",
]);

const CAP = "[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?";
const EN = new RegExp(
  `\\b(?:Mr|Mrs|Ms|Miss|Dr)\\.?\\s+${CAP}(?:\\s+${CAP})?|(?<=\\b(?:[Mm]y name is|[Mm]y name's|[Tt]his is|[Ii] am|[Ii]'m|[Nn]ame on the (?:card|account) is|[Ss]peaking with|(?:[Aa]ccount |[Cc]ard )?[Hh]older is|[Aa]pplicant is|[Cc]ustomer is|[Pp]atient is|[Cc]aller is|[Oo]wner is|[Ii]t's|[Ss]pelled)\\s+)${CAP}(?:\\s+${CAP})?`,
  "gu",
);
// An answer to "Patient's name?": capitalized words that open an utterance, checked against the question (below).
const EN_ANSWER = new RegExp(`(?<=(?:^|\\n))${CAP}\\s+${CAP}(?=[.,?!]|$)`, "gmu");
/** A question for a name, in the text just before an answer. */
const ASKED = /성함|이름|名前|氏名|名義|\bname\b/iu;
const asked = (text: string, at: number): boolean => ASKED.test(text.slice(Math.max(0, at - 60), at));

const EN_NOT_NAMES = new Set(
  "I The A An It This That Yes No Okay OK Sure Just Not Calling Here Sorry Thank Thanks Hello Hi Good Well So Very Really Still Also Actually Going Looking Trying Happy Glad Fine Great Sorry Afraid Correct Right Speaking Customer Support Service Billing Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December Visa Mastercard American Express Chase Bank".split(
    " ",
  ),
);

export function nameSpans(text: string): Span[] {
  const out: Span[] = [];
  const add = (start: number, value: string): void => {
    const end = start + value.length;
    if (!out.some((s) => start < s.end && s.start < end)) out.push({ type: "name", start, end, value });
  };
  for (const m of text.matchAll(KO)) {
    if (KO_NOT_NAMES.has(m[0])) continue;
    // "주소가 고객님", "이번에 고객님": a word ending in a particle, a space, then the honorific is not a name.
    if (/[에가는을를요도서고]$/u.test(m[0]) && /^\s/u.test(text.slice(m.index + m[0].length))) continue;
    add(m.index, m[0]);
  }
  for (const m of text.matchAll(KO_ANSWER)) if (!KO_NOT_NAMES.has(m[0]) && asked(text, m.index)) add(m.index, m[0]);
  for (const m of [...text.matchAll(JA), ...[...text.matchAll(JA_ANSWER)].filter((a) => asked(text, a.index))]) {
    if (JA_NOT_NAMES.has(m[0]) || /^(?:お|ご)/u.test(m[0]) || /[者人]$/u.test(m[0])) continue;
    add(m.index, m[0]);
  }
  for (const m of [...text.matchAll(EN), ...[...text.matchAll(EN_ANSWER)].filter((a) => asked(text, a.index))]) {
    const words = m[0].split(/\s+/u);
    // Drop trailing words that are not names ("This is Sarah Speaking" keeps Sarah).
    while (words.length > 0 && EN_NOT_NAMES.has(words[words.length - 1]!)) words.pop();
    if (words.length === 0 || EN_NOT_NAMES.has(words[0]!)) continue;
    add(m.index, words.join(" "));
  }
  return out;
}
