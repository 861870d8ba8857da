// What the LLM is asked. One system prompt and one set of worked examples (Korean, Japanese, English) for every
// job and language, so that the embedded model keeps their evaluation cached between jobs; only the last message
// (the transcript, its language, the client's insight.prompt and keywords) changes. The examples show what a
// small model does not do unprompted: a summary that condenses instead of copying, a short title that is not the
// summary, and a category chosen by who is calling whom about what.

export interface ChatTurn {
  user: string;
  assistant: string;
}

export interface ChatPrompt {
  system: string;
  examples: readonly ChatTurn[];
  user: string;
}

export interface InsightInput {
  /** The transcript, utterances joined (speaker-labelled when there is more than one speaker). */
  transcript: string;
  language: string;
  prompt?: string | undefined;
  keywords?: string[] | undefined;
  /** True when `transcript` is the notes of a long transcript's parts (map-reduce), not the transcript itself. */
  fromNotes?: boolean;
}

const LANGUAGE_NAMES: Record<string, string> = {
  ko: "Korean",
  ja: "Japanese",
  en: "English",
  zh: "Chinese",
  de: "German",
  fr: "French",
  es: "Spanish",
};

export const languageName = (lang: string): string => LANGUAGE_NAMES[lang] ?? lang;

const SYSTEM = [
  "You summarize phone calls and meetings for a call-centre dashboard. Answer with JSON only.",
  "- summary: 1 to 3 short sentences in the transcript's language that say who wanted what and what was decided (names, numbers, dates, amounts). Rephrase; never copy the transcript's sentences.",
  "- title: a few words naming the topic, in the transcript's language; not a sentence and not the summary.",
  "- unsolicited: true when the side that made the call sells or offers something the other side did not ask for (products, plans, loans, investments, prizes, refunds) or, uninvited, asks them for money, card or account details; false when someone calls for something they need themselves (a booking, an order, a delivery, a repair, a question, an insurance claim, a complaint), even when the staff check their name or date of birth, and for work or private talk.",
  "- category: who started the contact, and why. Exactly one of:",
  "  customer_calls_business = a customer, patient or citizen contacts a shop, restaurant, hotel, hospital, bank, delivery, repair or public office for something they need: question, booking, order, change, complaint, support;",
  "  unsolicited_offer_or_scam = a company or stranger contacts someone who did not ask for it: advertising, sales pitch, loan, insurance or investment offer, prize, refund, fraud, phishing (even when it sounds like customer service);",
  "  work_colleagues = people who work together, in one company or as business partners: meeting, report, instruction, schedule, quote, earnings call;",
  "  family_friends = private talk between family members or friends.",
].join("\n");

// Worked examples; none of them is in the evaluation set (bench/insight/). The two unsolicited sales calls (ko,
// ja) are there because without them the model, seeing a company's polite script, took such calls for enquiries.
const EXAMPLES: readonly ChatTurn[] = [
  {
    user: [
      "Language: Korean",
      "Transcript:",
      "[A] 네, 행복꽃집입니다.",
      "[B] 안녕하세요. 내일 오후까지 어머니 댁으로 장미 꽃다발을 보내고 싶은데 가능할까요?",
      "[A] 네, 가능합니다. 배송비 포함해서 5만 원입니다. 주소 불러 주시겠어요?",
      "[B] 대전 서구 둔산동이에요. 카드에 '생신 축하드려요'라고 써 주세요.",
      "[A] 네, 내일 오후 3시 전까지 배송해 드리겠습니다.",
    ].join("\n"),
    assistant:
      '{"summary": "고객이 어머니 생신 선물로 장미 꽃다발 배송을 주문했다. 내일 오후 3시 전 대전 둔산동으로 배송하며 가격은 배송비 포함 5만 원이다.", "title": "꽃다발 배송 주문", "unsolicited": false, "category": "customer_calls_business"}',
  },
  {
    user: [
      "Language: Japanese",
      "Transcript:",
      "[A] 課長、明日の打ち合わせの資料ですが、まだ売上データが届いていません。",
      "[B] 経理には昨日頼んだんだけどね。私から催促しておくよ。",
      "[A] ありがとうございます。届いたらすぐグラフを作って、夕方までに共有します。",
      "[B] 打ち合わせは10時からに変更になったので、それも先方に伝えておいて。",
    ].join("\n"),
    assistant:
      '{"summary": "明日の打ち合わせ資料に必要な売上データが未着のため、課長が経理に催促する。部下はデータ到着後にグラフを作り夕方までに共有し、打ち合わせが10時開始に変わったことを先方に伝える。", "title": "打ち合わせ資料の準備", "unsolicited": false, "category": "work_colleagues"}',
  },
  {
    user: [
      "Language: English",
      "Transcript:",
      "Hi, this is Jenna from Sunshine Vacations. You have been selected for a free three-night stay in Orlando. To reserve it, just confirm your credit card for a small booking fee today.",
    ].join("\n"),
    assistant:
      '{"summary": "An unsolicited caller from a travel company offers a \\"free\\" Orlando stay but asks for a credit card and a booking fee.", "title": "Free vacation offer", "unsolicited": true, "category": "unsolicited_offer_or_scam"}',
  },
  {
    user: [
      "Language: Korean",
      "Transcript:",
      "[A] 안녕하세요 고객님, 최신 스마트폰 무료 교체 행사 안내드리려고 연락드렸습니다.",
      "[B] 저 신청한 적 없는데요.",
      "[A] 고객님 번호가 우수 고객으로 선정되셔서요. 지금 요금제만 바꾸시면 기기값 없이 바로 보내 드립니다.",
      "[B] 괜찮습니다. 끊을게요.",
    ].join("\n"),
    assistant:
      '{"summary": "통신사 판매원이 먼저 전화해 요금제를 바꾸면 최신 스마트폰을 무료로 준다고 권유했으나, 고객은 신청한 적이 없다며 거절했다.", "title": "스마트폰 무료 교체 권유", "unsolicited": true, "category": "unsolicited_offer_or_scam"}',
  },
  {
    user: [
      "Language: Japanese",
      "Transcript:",
      "[A] お世話になっております。クリアウォーターの田中です。今なら新しいウォーターサーバーを一か月無料でお試しいただけます。",
      "[B] え、どちらでこの番号を?",
      "[A] 地域の皆様にご案内しております。今日お申し込みいただくと、ボトル2本もプレゼントです。",
      "[B] 結構です。",
    ].join("\n"),
    assistant:
      '{"summary": "ウォーターサーバー会社の営業が突然電話し、1か月無料のお試しとボトル2本の特典を勧めたが、相手は断った。", "title": "ウォーターサーバーの勧誘", "unsolicited": true, "category": "unsolicited_offer_or_scam"}',
  },
  {
    user: [
      "Language: Korean",
      "Transcript:",
      "[A] 민호야, 이번 주말에 이사하는 거 도와줄 수 있어?",
      "[B] 토요일 오전이면 돼. 몇 시까지 가면 돼?",
      "[A] 9시까지 와 줘. 점심은 내가 짜장면 살게.",
    ].join("\n"),
    assistant:
      '{"summary": "친구에게 토요일 이사를 도와 달라고 부탁했고, 친구는 오전 9시까지 오기로 했다. 점심은 부탁한 쪽이 사기로 했다.", "title": "주말 이사 도움 부탁", "unsolicited": false, "category": "family_friends"}',
  },
];

const EXAMPLE_LANGUAGES = new Set(["ko", "ja"]);

/** The instruction for one transcript: its language, the client's perspective and keywords, then the text. */
export function buildPrompt(input: InsightInput): ChatPrompt {
  const lines = [`Language: ${languageName(input.language)}`];
  if (input.prompt?.trim()) lines.push(`Focus (from the client): ${input.prompt.trim()}`);
  const keywords = input.keywords?.filter((k) => k.trim()) ?? [];
  if (keywords.length > 0) lines.push(`Keywords: ${keywords.join(", ")}`);
  lines.push(
    input.fromNotes ? "Notes on consecutive parts of one long conversation:" : "Transcript:",
    input.transcript,
  );
  // Four of the six examples are Korean or Japanese, and the 1.5B model answered English transcripts in Chinese or
  // Korean (whisper_jfk.flac, earnings22_3) until the language was repeated last; ko and ja answer in kind without it.
  if (!EXAMPLE_LANGUAGES.has(input.language)) {
    lines.push(`Write the title and the summary in ${languageName(input.language)}, in your own words.`);
  }
  return { system: SYSTEM, examples: EXAMPLES, user: lines.join("\n") };
}

const NOTES_SYSTEM =
  "You take notes on one part of a long phone call or meeting. Answer with JSON only: notes = 1 or 2 short sentences in the transcript's language with who wants what, decisions, names, numbers and dates. Rephrase; never copy sentences.";

/** The map step of a long transcript: notes on one window of it (no examples: the window itself is long). */
export function buildNotesPrompt(window: string, language: string): ChatPrompt {
  return {
    system: NOTES_SYSTEM,
    examples: [],
    user: `Language: ${languageName(language)}\nPart of the transcript:\n${window}`,
  };
}
