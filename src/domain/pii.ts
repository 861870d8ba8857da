// The personal-data types and masking modes of the `use_pii_redaction` extension (docs/pii.md): shared by the job
// config's schema (which checks them at submit) and the redaction stage (src/pii/).

/**
 * What can be redacted. `national_id`: Korea's resident registration number, Japan's My Number, the US SSN.
 * `number`: a long run of digits that no cue or form names (`min_digits` or more), masked because a garbled
 * identifier looks like that.
 */
export const PII_TYPES = [
  "phone",
  "card",
  "account",
  "national_id",
  "email",
  "dob",
  "address",
  "name",
  "number",
] as const;
export type PiiType = (typeof PII_TYPES)[number];

/**
 * How a found span is written: `mask` (default) replaces it with its type in brackets (`[PHONE]`); `asterisks`
 * replaces every character but spaces with `*` (keeps the length, as card receipts do); `hash` writes the type and
 * a keyed hash of the value (`[PHONE:3fa2c1d0]`), so that one value said twice in a job gets one tag, with a key
 * made for the job and thrown away, so that the tag cannot be reversed by trying every phone number.
 */
export const PII_MODES = ["mask", "asterisks", "hash"] as const;
export type PiiMode = (typeof PII_MODES)[number];

/** A run of this many digits or more with no cue is masked (`number`, or the type its form suggests). */
export const DEFAULT_MIN_DIGITS = 9;
/** The range `pii_redaction.min_digits` accepts; 0 turns the rule off. */
export const MIN_DIGITS_RANGE = { min: 6, max: 30 } as const;

export interface PiiOptions {
  types: readonly PiiType[];
  mode: PiiMode;
  /** Digits from which a run with no cue is masked; 0: only cued or well-formed numbers. */
  min_digits: number;
}

/** How the redacted copy of the audio (`pii_redaction.audio`) covers a span: silence (default) or a 1 kHz tone. */
export const PII_AUDIO_MODES = ["silence", "beep"] as const;
export type PiiAudioMode = (typeof PII_AUDIO_MODES)[number];

/** Added before and after each redacted span's word times in the redacted audio: word times from alignment can be off
 * by a frame or two, and a digit's first or last phoneme must not survive. */
export const AUDIO_MARGIN_MS = 250;
