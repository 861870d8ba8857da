// The redaction stage (src/pii/) as plain functions: the checks, the detectors on written and spoken numbers in
// ko/ja/en, the near-misses they must leave, the words and times of redacted utterances, the modes and the type
// filter; and the job config's extension fields.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInput } from "../../src/domain/errors.js";
import { parseJobConfig, piiOptions } from "../../src/domain/jobConfig.js";
import { PII_TYPES, type PiiType } from "../../src/domain/pii.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { isCard, isMyNumber, isRrn, isSsn, luhn } from "../../src/pii/checks.js";
import { detectPii, type Redaction, redactText, redactUtterances } from "../../src/pii/index.js";

const ALL = new Set<PiiType>(PII_TYPES);
const found = (text: string): [string, string][] =>
  detectPii(text, ALL).map((s) => [s.type, text.slice(s.start, s.end)]);
const R: Redaction = { types: PII_TYPES, mode: "mask", min_digits: 9, key: Buffer.alloc(32, 1) };

describe("checks", () => {
  it("Luhn, cards, RRN, My Number, SSN", () => {
    assert.ok(luhn("4111111111111111") && !luhn("4111111111111112"));
    assert.ok(isCard("4111111111111111") && !isCard("1111111111111117"));
    assert.ok(isRrn("9403082172611"));
    assert.ok(!isRrn("9413082172611"), "month 14");
    assert.ok(!isRrn("9403089172611"), "sex digit 9");
    assert.ok(isMyNumber("777512108835") && !isMyNumber("777512108836"));
    assert.ok(isSsn("164973577") && !isSsn("666123456") && !isSsn("123004567"));
  });
});

describe("detectors", () => {
  it("phone numbers written and spoken in ko, ja and en", () => {
    assert.deepEqual(found("010-1234-5678로 연락주세요"), [["phone", "010-1234-5678"]]);
    assert.deepEqual(found("제 번호는 공일공 일이삼사 오육칠팔이에요"), [["phone", "공일공 일이삼사 오육칠팔"]]);
    assert.deepEqual(found("공일공에 천이백삼십사에 오천육백칠십팔이요"), [
      ["phone", "공일공에 천이백삼십사에 오천육백칠십팔"],
    ]);
    assert.deepEqual(found("ゼロキューゼロのいちにさんよんのごろくななはちです"), [
      ["phone", "ゼロキューゼロのいちにさんよんのごろくななはち"],
    ]);
    assert.deepEqual(found("call me at four one five, five five five, two six seven one"), [
      ["phone", "four one five, five five five, two six seven one"],
    ]);
    assert.deepEqual(found("It's (503) 555-0147."), [["phone", "(503) 555-0147"]]);
  });

  it("a number said across an utterance break is one number", () => {
    assert.deepEqual(found("연락처는 공일공 오육이일팔\n칠삼사 이요"), [["phone", "공일공 오육이일팔\n칠삼사"]]);
  });

  it("cards by Luhn, national ids by their structure, accounts by their cue", () => {
    assert.deepEqual(found("카드 번호는 4111 1111 1111 1111 입니다"), [["card", "4111 1111 1111 1111"]]);
    assert.deepEqual(found("주민번호 940308-2172611 이요"), [["national_id", "940308-2172611"]]);
    assert.deepEqual(
      found("マイナンバーは1234 5678 9012です"),
      [["national_id", "1234 5678 9012"]],
      "a check digit never vetoes",
    );
    assert.deepEqual(found("マイナンバーは7775 1210 8835です"), [["national_id", "7775 1210 8835"]]);
    assert.deepEqual(found("my social security number is 164-97-3577"), [["national_id", "164-97-3577"]]);
    assert.deepEqual(found("신한은행 계좌 110 384 729104 입니다"), [["account", "110 384 729104"]]);
    assert.deepEqual(found("普通預金 1928374 です"), [["account", "1928374"]]);
  });

  it("e-mail addresses, dates of birth, addresses and names", () => {
    assert.deepEqual(found("hong123 골뱅이 naver 닷컴 이에요"), [["email", "hong123 골뱅이 naver 닷컴"]]);
    assert.deepEqual(found("email is john dot smith at gmail dot com"), [["email", "john dot smith at gmail dot com"]]);
    assert.deepEqual(found("생년월일은 천구백팔십오년 삼월 십오일입니다"), [["dob", "천구백팔십오년 삼월 십오일"]]);
    assert.deepEqual(found("date of birth is March 15th, 1985"), [["dob", "March 15th, 1985"]]);
    assert.deepEqual(found("서울시 강남구 테헤란로 123 이에요"), [["address", "서울시 강남구 테헤란로 123"]]);
    assert.deepEqual(found("東京都渋谷区神宮前1丁目2番3号です"), [["address", "東京都渋谷区神宮前1丁目2番3号"]]);
    assert.deepEqual(found("저는 김민수입니다"), [["name", "김민수"]]);
    assert.deepEqual(found("田中様、ありがとうございます"), [["name", "田中"]]);
    assert.deepEqual(found("Hi, my name is Sarah Johnson."), [["name", "Sarah Johnson"]]);
  });

  it("recall first: a garbled number is masked by its cue, its form, its length or the number it continues", () => {
    // Checks choose the type; they never keep a number in clear.
    assert.deepEqual(found("My card number is 4532 1488 0343 64677."), [["card", "4532 1488 0343 64677"]]);
    assert.deepEqual(found("연락처는 010-123-45678 입니다"), [["phone", "010-123-45678"]]);
    assert.deepEqual(found("You can call me Macat415552671. Thank you."), [["phone", "415552671"]]);
    assert.deepEqual(found("6175550123 that's my cell"), [["phone", "6175550123"]]);
    assert.deepEqual(found("It goes to 1847 2910 4471 22"), [["number", "1847 2910 4471 22"]]);
    assert.deepEqual(found("charge it to 5500-0000-000-00004"), [["card", "5500-0000-000-00004"]]);
    assert.deepEqual(found("카드 번호 말씀해 주세요.\n사오삼이 일사팔팔\n네.\n공삼사삼 육사육칠 칠이요."), [
      ["card", "사오삼이 일사팔팔"],
      ["card", "공삼사삼 육사육칠 칠"],
    ]);
    assert.deepEqual(found("口座番号をお願いします。\n七六五\nはい。\n四三二一です。"), [
      ["account", "七六五"],
      ["account", "四三二一"],
    ]);
    assert.deepEqual(found("Card number, four five three two one four eight eight\nGo on.\nzero three four three"), [
      ["card", "four five three two one four eight eight"],
      ["card", "zero three four three"],
    ]);
  });

  it("words a recognizer writes for digits and cues said apart: 'to' between digits, the area code", () => {
    assert.deepEqual(found("What's the account number?\nIt's 7 to 4 1 8 8 0 3 6."), [
      ["account", "7 to 4 1 8 8 0 3 6"],
    ]);
    assert.deepEqual(found("The area code is three one two, then five five five, zero one nine eight."), [
      ["phone", "three one two"],
      ["phone", "five five five, zero one nine eight"],
    ]);
    assert.deepEqual(found("from 2 to 4 pm, pages 10 to 20"), []);
    // "for" after a comma, as a recognizer punctuates a number read in groups.
    assert.deepEqual(found("My number is seven oh three, for five six, one two one two."), [
      ["phone", "seven oh three, for five six, one two one two"],
    ]);
    // The area code named in Japanese and Korean.
    assert.deepEqual(found("市外局番が〇六で、\n六一二三の四五六七です。"), [
      ["phone", "〇六"],
      ["phone", "六一二三の四五六七"],
    ]);
    // A count said after a card read out across the break is not the card's last digit.
    assert.deepEqual(found("카드 번호는 사일일일 일일일일 일일일일 일일일일일.\n3건 결제 확인됩니다."), [
      ["card", "사일일일 일일일일 일일일일 일일일일일"],
    ]);
    // Two pieces too short alone, with a reply between them, are one number: both are masked, cue or not.
    assert.deepEqual(found("번호가 공일공에 이삼사오에\n네.\n육칠팔구 입니다."), [
      ["phone", "공일공에 이삼사오"],
      ["phone", "육칠팔구"],
    ]);
    // A date said right after a number is not its leftover digit.
    assert.deepEqual(found("공일공 일이삼사 오육칠팔 칠 월 이십삼 일"), [["phone", "공일공 일이삼사 오육칠팔"]]);
  });

  it("min_digits: a long run with no cue is masked from that many digits, never with 0", () => {
    const text = "It goes to 1847 2910 4";
    assert.deepEqual(detectPii(text, ALL, 9).length, 1);
    assert.deepEqual(detectPii(text, ALL, 10).length, 0);
    assert.deepEqual(detectPii("It goes to 1847 2910 4471 22", ALL, 0).length, 0);
  });

  it("leaves near-misses: order numbers, amounts, times, counts, appointment dates, support lines", () => {
    for (const text of [
      "주문번호는 2024031512345 입니다",
      "가격은 1,234,500원이고 3시 30분에 갈게요",
      "상품 2개 39,900원 결제하셨습니다",
      "3월 15일에 방문하세요",
      "고객센터는 1588-1234 입니다",
      "문의는 1577-8899 로 주시면 되고요 연락처 하나 남겨 주세요",
      "Your order number is 7394021856.",
      "Our support line is 1-800-555-0100.",
      "That's $1,250 for 3 items, delivered at 10:30 on March 15th.",
      "注文番号は 4839201746 です。12,800円を2個",
      "다시 한번 말씀해 주시겠어요? 친구가 활동하는 정도예요",
      "The promotion ends on 2024-12-31 at 11:59 pm, after 18,342 minutes in 2023.",
      "주민번호 확인됐습니다.\n방문 예약은 4월 2일 10시 30분입니다. 한도는 3,000만 원입니다.",
      "이걸로 결제할게요\n89,000원 결제되었습니다.",
      "料金は月額1万2千円で、3,000ポイントが付きます。2024年3月15日から24か月です。",
    ])
      assert.deepEqual(found(text), [], text);
  });
});

const words = (msg: string, start: number): { start_at: number; duration: number; text: string }[] =>
  msg.split(" ").map((text, i) => ({ start_at: start + i * 500, duration: 400, text }));
const utt = (msg: string, start: number): Utterance => ({
  start_at: start,
  duration: 5000,
  msg,
  spk: 0,
  lang: "ko",
  words: words(msg, start),
});

describe("redactUtterances", () => {
  it("masks msg and words, a masked span becoming one word timed over the words it covers", () => {
    const [u] = redactUtterances([utt("연락처는 공일공 일이삼사 오육칠팔 입니다", 1000)], R);
    assert.equal(u!.msg, "연락처는 [PHONE] 입니다");
    assert.deepEqual(u!.words, [
      { start_at: 1000, duration: 400, text: "연락처는" },
      { start_at: 1500, duration: 1400, text: "[PHONE]" },
      { start_at: 3000, duration: 400, text: "입니다" },
    ]);
  });

  it("masks both parts of a number split across utterances, and leaves other utterances as they were", () => {
    const before = [utt("네 연락처는 공일공 오육이일팔", 0), utt("칠삼사 이요", 6000), utt("감사합니다", 12000)];
    const after = redactUtterances(before, R);
    assert.equal(after[0]!.msg, "네 연락처는 [PHONE]");
    assert.equal(after[1]!.msg, "[PHONE] 이요");
    assert.equal(after[2], before[2], "untouched utterances are the same objects");
    assert.ok(!JSON.stringify(after).match(/공일공|오육이일팔|칠삼사/u));
  });

  it("utterances without words get their msg redacted", () => {
    const [u] = redactUtterances([{ start_at: 0, duration: 1, msg: "my email is a.b@c.com", spk: 0, lang: "en" }], R);
    assert.deepEqual(u, { start_at: 0, duration: 1, msg: "my email is [EMAIL]", spk: 0, lang: "en" });
  });

  it("modes: asterisks keep the length, hash tags one value alike and depend on the job's key", () => {
    const text = "카드 4111 1111 1111 1111 그리고 다시 4111-1111-1111-1111";
    assert.equal(
      redactText(text, { ...R, mode: "asterisks" }),
      "카드 **** **** **** **** 그리고 다시 *******************",
    );
    const hashed = redactText(text, { ...R, mode: "hash" });
    const tags = hashed.match(/\[CARD:[0-9a-f]{8}\]/gu);
    assert.equal(tags?.length, 2);
    assert.equal(tags[0], tags[1], "the same card gets the same tag");
    assert.notEqual(redactText(text, { ...R, mode: "hash", key: Buffer.alloc(32, 2) }), hashed);
  });

  it("only the asked types are redacted", () => {
    const text = "저는 김민수입니다. 번호는 010-1234-5678";
    assert.equal(redactText(text, { ...R, types: ["phone"] }), "저는 김민수입니다. 번호는 [PHONE]");
    assert.equal(redactText(text, { ...R, types: ["name"] }), "저는 [NAME]입니다. 번호는 010-1234-5678");
  });
});

describe("job config", () => {
  const parse = (o: object) => parseJobConfig(JSON.stringify(o));
  it("absent: parsed as before, no redaction", () => {
    const c = parse({});
    assert.ok(!("use_pii_redaction" in c) && !("pii_redaction" in c));
    assert.equal(piiOptions(c), null);
    assert.equal(piiOptions(parse({ use_pii_redaction: false })), null);
  });
  it("defaults: every type, mask", () => {
    assert.deepEqual(piiOptions(parse({ use_pii_redaction: true })), { types: PII_TYPES, mode: "mask", min_digits: 9 });
    const asked = { types: ["card"], mode: "hash", min_digits: 12 };
    assert.deepEqual(piiOptions(parse({ use_pii_redaction: true, pii_redaction: asked })), asked);
    assert.equal(piiOptions(parse({ use_pii_redaction: true, pii_redaction: { min_digits: 0 } }))?.min_digits, 0);
  });
  it("bad values: InvalidInput naming the field", () => {
    const bad: [object, RegExp][] = [
      [
        { use_pii_redaction: true, pii_redaction: { types: ["ssn"] } },
        /^config\.pii_redaction\.types\.0: must be one of/,
      ],
      [{ use_pii_redaction: true, pii_redaction: { types: [] } }, /^config\.pii_redaction\.types/],
      [{ use_pii_redaction: true, pii_redaction: { mode: "blur" } }, /^config\.pii_redaction\.mode: must be one of/],
      [{ use_pii_redaction: 1 }, /^config\.use_pii_redaction/],
      [
        { use_pii_redaction: true, pii_redaction: { min_digits: 3 } },
        /^config\.pii_redaction\.min_digits: must be 0 or 6 to 30/,
      ],
      [{ use_pii_redaction: true, pii_redaction: { min_digits: 9.5 } }, /^config\.pii_redaction\.min_digits/],
      [{ pii_redaction: {} }, /config\.pii_redaction needs use_pii_redaction true/],
    ];
    for (const [config, message] of bad)
      assert.throws(
        () => parse(config),
        (e) => e instanceof InvalidInput && message.test(e.message),
      );
  });
});
