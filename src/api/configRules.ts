// The config part's cross-field rules (src/domain/jobConfig.ts, parseJobConfig) as JSON Schema, for /openapi.json:
// each `if`/`then` below is one check of parseJobConfig, so that a request the document allows is one the server
// accepts. test/security/configRules.test.ts holds the two together: every config it generates gets the same verdict
// from this schema (ajv) and from parseJobConfig. What a schema cannot state is in the description.
// biome-ignore-all lint/suspicious/noThenProperty: `then` here is JSON Schema's keyword, not a thenable
type Schema = Record<string, unknown>;

const is = (field: string, value: unknown): Schema => ({
  properties: { [field]: { const: value } },
  required: [field],
});
const has = (field: string): Schema => ({ required: [field] });

/** A pii_redaction object needs use_pii_redaction: true (the job config). */
export const PII_NEEDS_USE: Schema = { if: has("pii_redaction"), then: is("use_pii_redaction", true) };

/** The same rule for the OpenAI route's form, as `dependentSchemas`: schemathesis 4's coverage phase cannot judge
 * an `if`/`then` over a form that holds a binary file part (its run stops with "Unsupported type: 'Binary'"). */
export const PII_NEEDS_USE_FORM: Schema = { dependentSchemas: { pii_redaction: is("use_pii_redaction", true) } };

export const CONFIG_RULES: Schema[] = [
  // whisper needs a language.
  { if: is("model_name", "whisper"), then: has("language") },
  // sommers (the default) takes ko or ja, and no language_candidates.
  {
    if: { not: is("model_name", "whisper") },
    then: { properties: { language: { enum: ["ko", "ja"] } }, not: has("language_candidates") },
  },
  { if: has("diarization"), then: is("use_diarization", true) },
  PII_NEEDS_USE,
  {
    if: { properties: { pii_redaction: has("audio_mode") }, required: ["pii_redaction"] },
    then: { properties: { pii_redaction: is("audio", true) } },
  },
  { if: has("speaker_identification"), then: { anyOf: [is("use_diarization", true), is("use_multi_channel", true)] } },
  { not: { allOf: [is("use_refinement", true), is("use_multi_channel", true)] } },
];

/** callback_url as a client should write it: http(s), a host name or address, an optional port and path. The server
 * parses it as a URL (what it takes is wider) and refuses private addresses and localhost unless allowed. */
export const CALLBACK_URL_PATTERN = "^https?://[A-Za-z0-9.-]+(:[0-9]{1,4})?(/[A-Za-z0-9._~%/?=&-]*)?$";

export const CONFIG_RULES_TEXT =
  "Rules a schema states above (allOf): whisper needs language; sommers (the default) takes only ko or ja and no language_candidates; diarization needs use_diarization, pii_redaction needs use_pii_redaction, pii_redaction.audio_mode needs pii_redaction.audio, speaker_identification needs use_diarization or use_multi_channel; use_refinement cannot be combined with use_multi_channel. Rules it cannot: callback_url must be an http(s) URL, not a private address or localhost unless the server allows them (400 H0001); speaker_identification.speakers must be the caller's enrolled speakers (400 H0001); use_refinement and use_insight need an Enterprise client (403 H0003).";
