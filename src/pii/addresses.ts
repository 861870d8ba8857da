// Postal addresses by their structure, which every address of the three countries shares: Korean addresses are a
// chain of administrative units (시/도 → 구/군 → 동/읍/면 or a road 로/길 → number, 동·호), Japanese ones the same
// from the other end (都道府県 → 市区町村 → 丁目・番地・号), American ones a house number, a street and its suffix.
// A chain is taken only when it starts with a known province or city, or has at least two units and a number, so
// that a word that merely ends in 시/구/동 ("다시", "친구", "활동") is never one. Rules, not a model: see docs/pii.md.
import type { Span } from "./span.js";

const KO_REGIONS =
  "서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|충청북|충청남|전북|전남|전라북|전라남|경북|경남|경상북|경상남|제주|수원|성남|고양|용인|부천|안산|안양|남양주|화성|평택|의정부|시흥|파주|김포|광명|군포|하남|오산|이천|청주|천안|전주|포항|창원|김해|구미|진주|원주|춘천|강릉|목포|여수|순천";
// A house number in digits or read out; a read-out one ends the word (or takes 번지/호/동/층), so the 이 of 이에요
// is not taken for a 2.
const KO_NUM = "(?:\\d+(?:-\\d+)?|[일이삼사오육칠팔구십백천공]+(?=\\s|$|[,.]|번|호|동|층|길|가))";
const KO_UNIT = `[가-힣0-9]{1,8}(?:특별시|광역시|특별자치시|특별자치도|시|도|구|군|읍|면|동|리|가|대로|로|길|번길)`;
const KO_TAIL = `(?:\\s*(?:${KO_NUM}\\s*(?:번지|번길|번|호|동|층|길|가)?|[가-힣A-Za-z0-9]{1,10}(?:아파트|빌라|오피스텔|타워|맨션|빌딩)|${KO_NUM}\\s*(?:동|호)|,))*`;
const KO_START = new RegExp(
  `(?:${KO_REGIONS})(?:특별시|광역시|특별자치시|특별자치도|시|도)?(?:\\s+${KO_UNIT})+${KO_TAIL}`,
  "gu",
);
// Without a known region: at least two units, then a number (강남구 테헤란로 123).
const KO_UNITS = new RegExp(`${KO_UNIT}(?:\\s+${KO_UNIT})+\\s*${KO_NUM}${KO_TAIL}`, "gu");

const JA_PREFS =
  "北海道|東京都|京都府|大阪府|(?:青森|岩手|宮城|秋田|山形|福島|茨城|栃木|群馬|埼玉|千葉|神奈川|新潟|富山|石川|福井|山梨|長野|岐阜|静岡|愛知|三重|滋賀|兵庫|奈良|和歌山|鳥取|島根|岡山|広島|山口|徳島|香川|愛媛|高知|福岡|佐賀|長崎|熊本|大分|宮崎|鹿児島|沖縄)県";
const JA_NUM = "[0-9０-９〇一二三四五六七八九十百千]+";
const JA_BLOCK = `(?:${JA_NUM}\\s*(?:丁目|番地|番|号|の|−|-|ー)\\s*)+(?:${JA_NUM})?`;
const JA = new RegExp(
  `(?:〒?\\s*\\d{3}\\s*-\\s*\\d{4}\\s*)?(?:(?:${JA_PREFS})\\s*(?:[一-龥ぁ-んァ-ヶ]{1,6}?[市区町村郡]\\s*){0,3}(?:[一-龥ぁ-んァ-ヶ]{0,6}?\\s*${JA_BLOCK})?|(?:[一-龥ァ-ヶ]{1,6}?[市区町村郡]\\s*){1,3}[一-龥ぁ-んァ-ヶ]{0,6}?\\s*${JA_BLOCK})(?:\\s*[一-龥ァ-ヶA-Za-z]{1,12}(?:マンション|ハイツ|コーポ|ビル|荘|レジデンス))?(?:\\s*${JA_NUM}\\s*号室)?`,
  "gu",
);

const EN_NUM =
  "(?:\\d+|(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)[\\s-]+){0,5}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred))";
/** Words as a recognizer writes them: lower case, or capitalized. */
const anyCase = (words: string): string =>
  `(?:${words
    .split("|")
    .flatMap((w) => [w, w.replace(/\b[a-z]/gu, (c) => c.toUpperCase())])
    .join("|")})`;
const EN_STREET = `${anyCase("street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|circle|loop|square|parkway|highway|hwy|trail|row|plaza")}\\.?`;
const EN_STATE =
  "alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|georgia|hawaii|idaho|illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|minnesota|mississippi|missouri|montana|nebraska|nevada|new hampshire|new jersey|new mexico|new york|north carolina|north dakota|ohio|oklahoma|oregon|pennsylvania|rhode island|south carolina|south dakota|tennessee|texas|utah|vermont|virginia|washington|west virginia|wisconsin|wyoming|[A-Z]{2}";
const EN = new RegExp(
  `\\b${EN_NUM}\\s+(?:[A-Z][a-z]+\\s+){1,3}${EN_STREET}(?:,?\\s+(?:${anyCase("apartment|apt|unit|suite|number")}\\.?|#)\\s*[A-Za-z0-9-]+(?:\\s+${EN_NUM})?)?(?:,?\\s+(?:[A-Z][a-z]+\\s+){0,2}[A-Z][a-z]+,?\\s+(?:${anyCase(EN_STATE)}))?(?:,?\\s+(?:\\d{5}(?:-\\d{4})?|(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)[\\s,]+){4}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)))?\\b`,
  "gu",
);

/** A Korean chain is an address when it names a district or road and either a number or a second unit. */
function koreanAddress(s: string): boolean {
  const units = s.split(/\s+/u).filter((w) => /(?:구|군|동|읍|면|로|길|번길|대로)$/u.test(w)).length;
  return units >= 2 || (units >= 1 && /[0-9일이삼사오육칠팔구십백천]\s*(?:번지|번길|번|호|동|층)?$/u.test(s));
}

export function addressSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const re of [KO_START, KO_UNITS, JA, EN]) {
    for (const m of text.matchAll(re)) {
      const trimmed = m[0].replace(/[\s,、]+$/u, "");
      if (trimmed.length < 4) continue;
      if ((re === KO_START || re === KO_UNITS) && !koreanAddress(trimmed)) continue;
      const start = m.index;
      const end = start + trimmed.length;
      if (!out.some((s) => start < s.end && s.start < end)) out.push({ type: "address", start, end, value: trimmed });
    }
  }
  return out;
}
