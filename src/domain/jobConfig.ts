// The spec's config object (multipart part "config"): parsed once at submit, stored with the job, read by the
// worker. Unknown fields are ignored (dropped), as a hosted API would; known fields are checked strictly. The
// cross-field rules are the real service's, as measured by a public client (docs/api.md, "The real service's
// rules"): its messages too, so a client that matches on them keeps working.
import { z } from "zod";
import { InvalidInput } from "./errors.js";
import { WHISPER_LANGUAGES } from "./languages.js";
import {
  AUDIO_MARGIN_MS,
  DEFAULT_MIN_DIGITS,
  MIN_DIGITS_RANGE,
  PII_AUDIO_MODES,
  PII_MODES,
  PII_TYPES,
  type PiiAudioMode,
  type PiiOptions,
} from "./pii.js";

/** One message for every way a min_digits can be wrong (a union reports its branches' own issues otherwise). */
const MIN_DIGITS_MESSAGE = `must be 0 or ${MIN_DIGITS_RANGE.min} to ${MIN_DIGITS_RANGE.max}`;

export const MAX_KEYWORDS = 500;
export const MAX_KEYWORD_CHARS = 20;
export const MAX_IDENTIFIED_SPEAKERS = 64;

const languageCode = z
  .string()
  .refine((c) => WHISPER_LANGUAGES.has(c), { message: "is not a supported ISO 639-1 language code" });

/** sommers' languages; whisper takes these, every other language Whisper knows, and detect/multi. */
export const SOMMERS_LANGUAGES: ReadonlySet<string> = new Set(["ko", "ja"]);
/** The real service's candidates for detect/multi when none are given. */
export const DEFAULT_CANDIDATES = ["ko", "ja", "zh", "en"];

export const ConfigSchema = z.object({
  model_name: z.enum(["sommers", "whisper"]).default("sommers"),
  language: z
    .string()
    .refine((c) => c === "detect" || c === "multi" || WHISPER_LANGUAGES.has(c), {
      message: "unsupported language (ko, ja; with whisper also detect, multi or any ISO 639-1 code Whisper knows)",
    })
    .optional(),
  language_candidates: z.array(languageCode).min(1).max(100).optional(),
  use_diarization: z.boolean().default(false),
  diarization: z.object({ spk_count: z.number().int().min(0).max(100).default(0) }).default({ spk_count: 0 }),
  use_multi_channel: z.boolean().default(false),
  use_itn: z.boolean().default(true),
  use_disfluency_filter: z.boolean().default(true),
  use_profanity_filter: z.boolean().default(false),
  use_paragraph_splitter: z.boolean().default(true),
  paragraph_splitter: z.object({ max: z.number().int().min(1).max(100000).default(50) }).default({ max: 50 }),
  domain: z.enum(["GENERAL", "CALL"]).default("GENERAL"),
  use_word_timestamp: z.boolean().default(false),
  keywords: z
    .array(z.string().min(1).max(MAX_KEYWORD_CHARS, `must be at most ${MAX_KEYWORD_CHARS} characters`))
    .max(MAX_KEYWORDS, `must hold at most ${MAX_KEYWORDS} keywords`)
    .optional(),
  use_refinement: z.boolean().default(false),
  use_insight: z.boolean().default(false),
  insight: z.object({ prompt: z.string().max(2000).optional() }).default({}),
  // Beyond the spec (docs/extras.md): where to POST {id, status} when the job is final. The address checks that
  // depend on the server's settings are in src/callbacks/ssrf.ts.
  callback_url: z.string().max(2048, "must be at most 2048 characters").optional(),
  // Beyond the spec (docs/pii.md): personal data masked in every output. Optional, without defaults, so that a
  // config that does not name them parses (and is stored) exactly as before.
  use_pii_redaction: z
    .boolean()
    .optional()
    .meta({ description: "Extension, not in the spec (docs/pii.md): redact personal data in every output" }),
  pii_redaction: z
    .object({
      types: z
        .array(z.enum(PII_TYPES, { message: `must be one of ${PII_TYPES.join(", ")}` }))
        .min(1)
        .optional(),
      mode: z.enum(PII_MODES, { message: `must be one of ${PII_MODES.join(", ")}` }).optional(),
      // A union, not a refinement, so that /openapi.json states the rule (anyOf).
      min_digits: z
        .union(
          [
            z.literal(0, { error: MIN_DIGITS_MESSAGE }),
            z
              .number({ error: MIN_DIGITS_MESSAGE })
              .int({ error: MIN_DIGITS_MESSAGE })
              .min(MIN_DIGITS_RANGE.min, { error: MIN_DIGITS_MESSAGE })
              .max(MIN_DIGITS_RANGE.max, { error: MIN_DIGITS_MESSAGE }),
          ],
          { error: MIN_DIGITS_MESSAGE },
        )
        .optional(),
      audio: z.boolean().optional(),
      audio_mode: z.enum(PII_AUDIO_MODES, { message: `must be one of ${PII_AUDIO_MODES.join(", ")}` }).optional(),
    })
    .optional()
    .meta({
      description: `Extension, not in the spec (docs/pii.md): which types (default all), how they are written (default mask), from how many digits a run with no cue is masked (min_digits, default ${DEFAULT_MIN_DIGITS}, 0 off), and whether a copy of the audio with every redacted span silenced (audio_mode silence, default) or beeped (beep), ${AUDIO_MARGIN_MS} ms each side, is kept for GET /v1/transcribe/{id}/redacted-audio (audio, default false); needs use_pii_redaction`,
    }),
  // Beyond the spec, where the server enables known speakers (docs/speakers.md); ignored like any unknown field
  // where it does not.
  speaker_identification: z
    .object({
      speakers: z
        .array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be speaker ids from POST /v1/speakers"))
        .max(MAX_IDENTIFIED_SPEAKERS, `must hold at most ${MAX_IDENTIFIED_SPEAKERS} speaker ids`)
        .default([]),
    })
    .optional()
    .meta({
      description:
        "Extension, not in the spec, where the server enables it (docs/speakers.md): name the diarized speakers (or channels) who match these enrolled speakers; an empty list means all of the client's. Needs use_diarization or use_multi_channel",
    }),
});

export type JobConfig = z.infer<typeof ConfigSchema> & { language: string };

/** The redaction a job asked for, its defaults filled in (every type, `mask`, 9 digits); null when it asked for none. */
export function piiOptions(config: JobConfig): PiiOptions | null {
  if (config.use_pii_redaction !== true) return null;
  return {
    types: config.pii_redaction?.types ?? PII_TYPES,
    mode: config.pii_redaction?.mode ?? "mask",
    min_digits: config.pii_redaction?.min_digits ?? DEFAULT_MIN_DIGITS,
  };
}

/** The redacted copy of the audio the job asked for (`pii_redaction.audio`), or null. */
export function piiAudioMode(config: JobConfig): PiiAudioMode | null {
  if (config.use_pii_redaction !== true || config.pii_redaction?.audio !== true) return null;
  return config.pii_redaction.audio_mode ?? "silence";
}

/** Whether the language is a fixed one (not detect/multi). */
export const isFixedLanguage = (language: string): boolean => language !== "detect" && language !== "multi";

export interface ParseOptions {
  /** Known speakers are enabled (docs/speakers.md); otherwise `speaker_identification` is dropped unread. */
  speakers?: boolean;
}

/** The keys secure-json-parse refuses (the multipart parser reads a config part sent as application/json with it):
 * refused here too, so that a config means the same whatever its part's Content-Type. */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  const prototypeKey =
    key === "__proto__" ||
    (key === "constructor" && value !== null && typeof value === "object" && Object.hasOwn(value, "prototype"));
  if (prototypeKey)
    throw new InvalidInput(`config must not hold a ${key === "__proto__" ? key : "constructor.prototype"} key`);
  return value;
}

/** Parses the config part's text. Every failure is a 400 H0001 whose message names the field. */
export function parseJobConfig(text: string | undefined, opts: ParseOptions = {}): JobConfig {
  if (text === undefined) throw new InvalidInput("config part is required");
  let raw: unknown;
  try {
    raw = JSON.parse(text, refusePrototypeKeys);
  } catch (err) {
    throw err instanceof InvalidInput ? err : new InvalidInput("config is not valid JSON");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new InvalidInput("config must be a JSON object");
  }
  if (!opts.speakers) delete (raw as Record<string, unknown>).speaker_identification;
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "config";
    throw new InvalidInput(`config.${field}: ${issue?.message ?? "invalid"}`);
  }
  const c = parsed.data;
  const given = raw as Record<string, unknown>;
  if (c.model_name === "whisper" && c.language === undefined) {
    throw new InvalidInput("unsupported language: config.language is required with model_name whisper");
  }
  if (c.model_name === "sommers" && c.language !== undefined && !SOMMERS_LANGUAGES.has(c.language)) {
    throw new InvalidInput(
      `unsupported language: config.language ${c.language} requires model_name whisper (sommers supports ko, ja)`,
    );
  }
  if (c.model_name === "sommers" && c.language_candidates !== undefined) {
    throw new InvalidInput("unsupported language: config.language_candidates requires model_name whisper");
  }
  if (given.diarization !== undefined && !c.use_diarization) {
    throw new InvalidInput(
      "diarization cannot be used without use_diarization (config.diarization needs use_diarization true)",
    );
  }
  if (given.pii_redaction !== undefined && c.use_pii_redaction !== true) {
    throw new InvalidInput("config.pii_redaction needs use_pii_redaction true");
  }
  if (c.pii_redaction?.audio_mode !== undefined && c.pii_redaction.audio !== true) {
    throw new InvalidInput("config.pii_redaction.audio_mode needs pii_redaction.audio true");
  }
  if (c.speaker_identification && !c.use_diarization && !c.use_multi_channel) {
    throw new InvalidInput("config.speaker_identification needs use_diarization or use_multi_channel true");
  }
  if (c.use_refinement && c.use_multi_channel) {
    throw new InvalidInput("config.use_refinement cannot be combined with use_multi_channel");
  }
  const language = c.language ?? "ko";
  // The candidates apply to detect/multi only; there they default to the real service's set.
  const language_candidates = isFixedLanguage(language)
    ? c.language_candidates
    : (c.language_candidates ?? DEFAULT_CANDIDATES);
  return { ...c, language, ...(language_candidates ? { language_candidates } : {}) };
}
