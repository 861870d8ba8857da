// What the LLM is asked: the same instruction for every backend, written in the transcript's language (a small
// model answers in the language it is spoken to), with the client's insight.prompt and keywords as steering.

export interface InsightInput {
  /** The transcript, utterances joined (speaker-labelled when there is more than one speaker). */
  transcript: string;
  language: string;
  prompt?: string | undefined;
  keywords?: string[] | undefined;
}

/** The transcript is cut to this many characters (head and tail) to fit a small model's context. */
export const MAX_TRANSCRIPT_CHARS = 3000;

const INSTRUCTIONS: Record<string, { system: string; task: string; perspective: string; keywords: string }> = {
  ko: {
    system: "당신은 통화와 회의 녹취록을 읽고 한국어로 짧게 정리하는 비서입니다.",
    task: "다음 녹취록의 제목(title)과 요약(summary)을 한국어로 쓰고, 분류(category)를 일상, 문의, 업무, 스팸 중 하나로 고르세요. 일상: 사적인 대화, 문의: 질문·예약·주문·상담, 업무: 회의·업무 지시·보고, 스팸: 광고·사기·원치 않는 판촉.",
    perspective: "관점",
    keywords: "핵심어",
  },
  ja: {
    system: "あなたは通話や会議の書き起こしを読んで日本語で短くまとめるアシスタントです。",
    task: "次の書き起こしのタイトル(title)と要約(summary)を日本語で書き、分類(category)を 일상(日常), 문의(問い合わせ), 업무(業務), 스팸(スパム) のいずれかから選んでください。",
    perspective: "観点",
    keywords: "キーワード",
  },
  en: {
    system: "You read call and meeting transcripts and summarize them briefly in English.",
    task: "Write a title and a summary of the following transcript in English, and pick its category: 일상 (everyday talk), 문의 (inquiry, booking, order, support), 업무 (work, meeting, report), 스팸 (spam, advertising, fraud).",
    perspective: "Perspective",
    keywords: "Keywords",
  },
};

export function clipTranscript(text: string, max = MAX_TRANSCRIPT_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.7);
  return `${text.slice(0, head)} … ${text.slice(text.length - (max - head))}`;
}

export function buildPrompt(input: InsightInput): { system: string; user: string } {
  const t = INSTRUCTIONS[input.language] ?? INSTRUCTIONS.en!;
  const lines = [t.task];
  if (input.language !== "ko" && input.language !== "ja" && input.language !== "en") {
    lines.push(`Write the title and summary in the transcript's language (${input.language}).`);
  }
  if (input.prompt?.trim()) lines.push(`${t.perspective}: ${input.prompt.trim()}`);
  const keywords = input.keywords?.filter((k) => k.trim()) ?? [];
  if (keywords.length > 0) lines.push(`${t.keywords}: ${keywords.join(", ")}`);
  lines.push("", clipTranscript(input.transcript));
  return { system: t.system, user: lines.join("\n") };
}
