// OpenAI's transcription answers (docs/extras.md): the bodies of each response_format for a completed job, and the
// error shape, with their schemas for the OpenAPI document. Pure functions of the utterances.
import { z } from "zod";
import type { Utterance } from "../domain/utterance.js";
import type { ApiError } from "../errors.js";
import { renderExport } from "../export/formats.js";
import { ErrorBody, Int } from "./route.js";

export const OPENAI_FORMATS = ["json", "text", "srt", "vtt", "verbose_json"] as const;
export type OpenAiFormat = (typeof OPENAI_FORMATS)[number];

const Usage = z.object({ type: z.literal("duration"), seconds: Int });
export const OpenAiJson = z.object({ text: z.string(), usage: Usage });
export const OpenAiVerbose = z.object({
  task: z.literal("transcribe"),
  language: z.string(),
  duration: z.number(),
  text: z.string(),
  segments: z
    .array(
      z.object({
        id: Int,
        seek: Int,
        start: z.number(),
        end: z.number(),
        text: z.string(),
        tokens: z.array(Int),
        temperature: z.number(),
        avg_logprob: z.number(),
        compression_ratio: z.number(),
        no_speech_prob: z.number(),
        spk: Int.optional().meta({
          description: "Extension: the speaker, when the request diarized (docs/speakers.md)",
        }),
        spk_name: z
          .string()
          .optional()
          .meta({ description: "Extension: the known speaker's name, with speaker_identification (docs/speakers.md)" }),
      }),
    )
    .optional(),
  words: z.array(z.object({ word: z.string(), start: z.number(), end: z.number() })).optional(),
  usage: Usage,
});
/** OpenAI's error shape, with sori's code. */
export const OpenAiError = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      param: z.string().nullable(),
      code: ErrorBody.shape.code,
    }),
  })
  .meta({ id: "OpenAiError" });

const languageNames = new Intl.DisplayNames(["en"], { type: "language" });

/** OpenAI's response body for a completed job; a string for text, srt and vtt. */
export function openAiBody(
  format: OpenAiFormat,
  utterances: Utterance[],
  opts: { durationS: number | null; words: boolean; segments: boolean; speakers?: boolean },
): string | z.infer<typeof OpenAiJson> | z.infer<typeof OpenAiVerbose> {
  const sorted = [...utterances].sort((a, b) => a.start_at - b.start_at);
  const text = joinText(sorted);
  const durationS =
    opts.durationS ?? (sorted.length ? Math.max(...sorted.map((u) => u.start_at + u.duration)) / 1000 : 0);
  const usage = { type: "duration" as const, seconds: Math.ceil(durationS) };
  switch (format) {
    case "text":
      return text + "\n";
    case "srt":
    case "vtt":
      return renderExport(format, sorted, opts.speakers ? { speakers: "speaker" } : {});
    case "json":
      return { text, usage };
    case "verbose_json": {
      const lang = sorted[0]?.lang ?? "";
      const body: Omit<z.infer<typeof OpenAiVerbose>, "usage"> = {
        task: "transcribe",
        language: lang ? (languageNames.of(lang) ?? lang).toLowerCase() : "",
        duration: durationS,
        text,
      };
      if (opts.segments) {
        // sori does not expose the decoder's statistics; the fields are there, with neutral values, for clients
        // that read them.
        body.segments = sorted.map((u, id) => ({
          id,
          seek: 0,
          start: u.start_at / 1000,
          end: (u.start_at + u.duration) / 1000,
          text: u.msg,
          tokens: [],
          temperature: 0,
          avg_logprob: 0,
          compression_ratio: 0,
          no_speech_prob: 0,
          ...(opts.speakers ? { spk: u.spk, ...(u.spk_name ? { spk_name: u.spk_name } : {}) } : {}),
        }));
      }
      if (opts.words) {
        body.words = sorted.flatMap((u) =>
          (u.words ?? []).map((w) => ({
            word: w.text,
            start: w.start_at / 1000,
            end: (w.start_at + w.duration) / 1000,
          })),
        );
      }
      return { ...body, usage }; // last, as OpenAI sends it
    }
  }
}

/** Utterances joined as one text: with spaces, except between two in a language written without them. */
function joinText(utterances: Utterance[]): string {
  let out = "";
  utterances.forEach((u, i) => {
    const noSpace = i > 0 && ["ja", "zh"].includes(u.lang) && ["ja", "zh"].includes(utterances[i - 1]!.lang);
    out += (i === 0 || noSpace ? "" : " ") + u.msg.trim();
  });
  return out;
}

/** OpenAI's error body for one of sori's errors. */
export function openAiError(e: ApiError): z.infer<typeof OpenAiError> {
  return { error: { message: e.message, type: errorType(e.status), param: null, code: e.code } };
}

const errorType = (status: number): string =>
  status === 401
    ? "authentication_error"
    : status === 403
      ? "permission_error"
      : status === 429
        ? "rate_limit_error"
        : status >= 500
          ? "server_error"
          : "invalid_request_error";
