// The insight item of the spec ({title, summary, category}) and the checks that every generated item passes before
// it reaches a response, whichever backend wrote it: an LLM's text is parsed, validated and cleaned here, so a
// malformed or off-language answer becomes an insight failure, never a malformed response.
import { z } from "zod";
import { copyRate } from "./copy.js";

export const CATEGORIES = ["일상", "문의", "업무", "스팸"] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * What the model chooses from: English labels that name who is talking to whom, each mapped to one of the spec's
 * four values. With the Korean values themselves as the choice, the 1.5B model labelled most calls to a hotel,
 * restaurant or shop 업무 ("work": the staff speak business language), and with a plain "inquiry" label it took
 * sales and loan calls for enquiries; labels in words it knows that say who started the contact measured better
 * (docs/enterprise.md, Figures).
 */
export const CATEGORY_LABELS = {
  customer_calls_business: "문의",
  work_colleagues: "업무",
  family_friends: "일상",
  unsolicited_offer_or_scam: "스팸",
} as const satisfies Record<string, Category>;
export type CategoryLabel = keyof typeof CATEGORY_LABELS;
const LABELS = Object.keys(CATEGORY_LABELS) as [CategoryLabel, ...CategoryLabel[]];

// Bounds that also bound generation time: a small model asked for a summary tends to write up to the limit.
export const TITLE_MAX = 60;
export const SUMMARY_MAX = 300;

export interface InsightItem {
  title: string;
  summary: string;
  category: Category;
}

/**
 * JSON schema of one item: the grammar the embedded model decodes under, and the OpenAI response_format. The
 * summary comes first so that the title and the category are written with the summary already in view; then a
 * yes/no question on the call itself (`unsolicited`), which with the label decides spam (categoryOf).
 */
export const INSIGHT_JSON_SCHEMA = {
  type: "object",
  properties: {
    summary: { type: "string", minLength: 1, maxLength: SUMMARY_MAX },
    title: { type: "string", minLength: 1, maxLength: TITLE_MAX },
    unsolicited: { type: "boolean" },
    category: { enum: [...LABELS] },
  },
  required: ["summary", "title", "unsolicited", "category"],
  additionalProperties: false,
} as const;

const SPAM_LABEL = "unsolicited_offer_or_scam" satisfies CategoryLabel;

export const NOTES_MAX = 240;

/** The map step's answer for one window of a long transcript (prompt.ts, buildNotesPrompt). */
export const NOTES_JSON_SCHEMA = {
  type: "object",
  properties: { notes: { type: "string", minLength: 1, maxLength: NOTES_MAX } },
  required: ["notes"],
  additionalProperties: false,
} as const;

export const SCHEMAS = { item: INSIGHT_JSON_SCHEMA, notes: NOTES_JSON_SCHEMA } as const;
export type SchemaName = keyof typeof SCHEMAS;

/** A summary is refused as a copy when one verbatim span of the transcript makes up this share of it. */
export const MAX_COPY_RATE = 0.8;

const clean = (s: string): string =>
  s
    .replace(/[\p{Cc}\p{Cf}]/gu, " ")
    .replace(/\s+/gu, " ")
    .trim();

const ItemSchema = z.object({
  title: z.string().transform(clean).pipe(z.string().min(1).max(TITLE_MAX)),
  summary: z.string().transform(clean).pipe(z.string().min(1).max(SUMMARY_MAX)),
  /** Absent from another backend's answer when it did not follow the schema to the letter. */
  unsolicited: z.boolean().optional(),
  // The model's label, mapped to the spec's value; a spec value itself is taken as well (another backend's answer).
  category: z.union([z.enum(LABELS).transform((l) => CATEGORY_LABELS[l]), z.enum(CATEGORIES)]),
});

/** Why a job that asked for insight got `[]` (the `reason` label of sori_insight_failures_total). */
export type InsightFailure = "timeout" | "empty_transcript" | "invalid_answer" | "backend_error" | "not_configured";

export class InsightError extends Error {
  constructor(
    message: string,
    readonly reason: InsightFailure = "invalid_answer",
  ) {
    super(message);
  }
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw.trim());
  } catch {
    throw new InsightError(`the model's answer is not JSON: ${raw.slice(0, 80)}`);
  }
}

/**
 * Parses an LLM's answer into an item; anything else (not JSON, extra text, wrong fields, another language, a
 * title equal to the summary, a summary copied from `source`) is an InsightError.
 */
export function parseInsight(raw: string, language: string, source?: string): InsightItem {
  const parsed = ItemSchema.safeParse(parseJson(raw));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InsightError(`the model's answer is not an insight item: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  const item = parsed.data;
  if (!writtenIn(item.summary, language) || !writtenIn(item.title, language)) {
    throw new InsightError(`the model's answer is not written in the transcript's language (${language})`);
  }
  if (item.title === item.summary) throw new InsightError("the model's title is the summary");
  if (source !== undefined && item.summary.length > 20 && copyRate(item.summary, source) >= MAX_COPY_RATE) {
    throw new InsightError("the model's summary is a copy of the transcript");
  }
  // Only the three fields, in a fixed order: nothing else the model wrote can reach the response.
  return { title: item.title, summary: item.summary, category: categoryOf(item.category, item.unsolicited) };
}

/**
 * Spam takes both of the model's signals: the spam label and `unsolicited: true`. Choosing among four labels alone,
 * the 1.5B model took 5 of 8 sales, loan and fraud calls for enquiries; tying the label to the yes/no answer made it
 * call a 5-minute insurance claim and a redelivery request spam. Where the two disagree the call is not spam, and a
 * spam label without the unsolicited answer is a call to a business (문의), which is what the model gave that pair
 * to (a phone bill, a redelivery). docs/enterprise.md has the runs. Another backend's answer without `unsolicited`
 * keeps its label.
 */
export function categoryOf(category: Category, unsolicited: boolean | undefined): Category {
  if (unsolicited === undefined || category !== CATEGORY_LABELS[SPAM_LABEL]) return category;
  return unsolicited ? category : CATEGORY_LABELS.customer_calls_business;
}

const NotesSchema = z.object({ notes: z.string().transform(clean).pipe(z.string().min(1).max(NOTES_MAX)) });

/** Parses the map step's answer (notes on one window); anything else is an InsightError. */
export function parseNotes(raw: string): string {
  const parsed = NotesSchema.safeParse(parseJson(raw));
  if (!parsed.success) throw new InsightError("the model's notes are not valid");
  return parsed.data.notes;
}

const HANGUL = /\p{Script=Hangul}/gu;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const HAN = /\p{Script=Han}/gu;
const LATIN = /\p{Script=Latin}/gu;

const count = (s: string, re: RegExp): number => s.match(re)?.length ?? 0;

/** Whether the text's letters are mostly in the script of `language` (ko, ja, zh, Latin-script languages). */
export function writtenIn(text: string, language: string): boolean {
  const letters = count(text, /\p{L}/gu);
  if (letters === 0) return false;
  const share = (n: number): number => n / letters;
  switch (language) {
    case "ko":
      return share(count(text, HANGUL)) >= 0.5;
    case "ja":
      return share(count(text, KANA) + count(text, HAN)) >= 0.5;
    case "zh":
      return share(count(text, HAN)) >= 0.5;
    case "en":
    case "de":
    case "fr":
    case "es":
    case "it":
    case "pt":
    case "nl":
    case "vi":
    case "id":
      return share(count(text, LATIN)) >= 0.5;
    default:
      return true; // no script check for other languages
  }
}

/** The transcript's language: the one that covers the most characters of its utterances. */
export function dominantLanguage(utterances: readonly { msg: string; lang: string }[], fallback: string): string {
  const chars = new Map<string, number>();
  for (const u of utterances) chars.set(u.lang, (chars.get(u.lang) ?? 0) + u.msg.length);
  let best = fallback;
  let most = -1;
  for (const [lang, n] of chars) {
    if (n > most) [best, most] = [lang, n];
  }
  return best;
}
