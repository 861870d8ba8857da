// The streaming session's config: the query string of GET /v1/transcribe:streaming, as the public RTZR clients
// send it (livekit-plugins-rtzr 1.8.9, pipecat-rtzr 0.1.0; docs/streaming.md lists each field and its source).
// Unknown fields are ignored, as the batch config's are; known fields are checked strictly.
import { z } from "zod";
import { WHISPER_LANGUAGES } from "../domain/languages.js";

const MAX_KEYWORDS = 100;
const MAX_KEYWORD_CHARS = 20;

const bool = z.enum(["true", "false"], { message: "must be true or false" }).transform((v) => v === "true");
const num = (min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/u, "must be a number")
    .transform(Number)
    .pipe(z.number().min(min).max(max));

/** `word` or `word:boost` (boost -5.0 to 5.0), comma-separated: the clients' format. */
const keywords = z
  .string()
  .transform((s) => s.split(",").filter((k) => k.trim().length > 0))
  .pipe(
    z
      .array(
        z
          .string()
          .transform((k) => {
            const at = k.lastIndexOf(":");
            return at > 0 ? { word: k.slice(0, at).trim(), boost: k.slice(at + 1) } : { word: k.trim(), boost: null };
          })
          .pipe(
            z.object({
              word: z.string().min(1).max(MAX_KEYWORD_CHARS, `a keyword is at most ${MAX_KEYWORD_CHARS} characters`),
              boost: z
                .string()
                .regex(/^-?\d+(\.\d+)?$/u, "a keyword's boost must be a number")
                .transform(Number)
                .pipe(z.number().min(-5).max(5, "a keyword's boost is -5.0 to 5.0"))
                .nullable(),
            }),
          ),
      )
      .max(MAX_KEYWORDS, `at most ${MAX_KEYWORDS} keywords`),
  );

export const StreamQuerySchema = z
  .object({
    sample_rate: z
      .string()
      .regex(/^\d+$/u, "must be an integer")
      .transform(Number)
      .pipe(z.number().min(8000, "must be 8000 to 48000").max(48000, "must be 8000 to 48000")),
    encoding: z.enum(["LINEAR16", "MULAW", "ALAW"], { message: "must be LINEAR16, MULAW or ALAW" }).default("LINEAR16"),
    model_name: z
      .enum(["sommers_ko", "sommers_ja", "sommers", "whisper"], {
        message: "must be sommers_ko, sommers_ja or whisper",
      })
      .default("sommers_ko"),
    language: z
      .string()
      .refine((c) => WHISPER_LANGUAGES.has(c), { message: "is not a supported ISO 639-1 language code" })
      .optional(),
    domain: z.enum(["CALL", "MEETING", "GENERAL"], { message: "must be CALL or MEETING" }).default("CALL"),
    epd_time: num(0.1, 10).default(0.5),
    noise_threshold: num(0, 1).optional(),
    active_threshold: num(0, 1).optional(),
    use_itn: bool.default(true),
    use_disfluency_filter: bool.default(false),
    use_profanity_filter: bool.default(false),
    use_punctuation: bool.default(false),
    keywords: keywords.optional(),
  })
  .transform((q) => ({
    ...q,
    // sommers_ko and sommers_ja name their language; whisper takes `language` (pipecat sends it), Korean by default.
    language: q.model_name === "sommers_ja" ? "ja" : q.model_name === "whisper" ? (q.language ?? "ko") : "ko",
    model: q.model_name === "whisper" ? ("whisper" as const) : ("sommers" as const),
  }));

export type StreamQuery = z.output<typeof StreamQuerySchema>;

/** A problem with the query as one line for the client: the field, then the schema's words (the streaming route's
 * refusals, src/api/streaming.ts). */
export const streamQueryRefusal = (path: readonly PropertyKey[], message: string): string =>
  `${path.length ? path.join(".") : "query"}: ${message}`;
