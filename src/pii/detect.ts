// Every piece of personal data in a text, of the asked types. The detectors run on the whole transcript joined
// (utterances and paragraphs one after another), so a number said across an utterance break is still one number.
import { DEFAULT_MIN_DIGITS, type PiiType } from "../domain/pii.js";
import { addressSpans } from "./addresses.js";
import { dobSpans } from "./dates.js";
import { emailSpans } from "./email.js";
import { nameSpans } from "./names.js";
import { numberSpans } from "./numbers.js";
import { mergeSpans, type Span } from "./span.js";

export function detectPii(text: string, types: ReadonlySet<PiiType>, minDigits = DEFAULT_MIN_DIGITS): Span[] {
  // Surest first: where two detectors claim the same characters, the earlier one keeps them.
  // The recall layer's numbers (weak) come after dates of birth and addresses, which are read with their context.
  const numbers = numberSpans(text, { minDigits }).filter((s) => types.has(s.type));
  const lists = [
    emailSpans(text),
    numbers.filter((s) => !s.weak),
    dobSpans(text),
    addressSpans(text),
    numbers.filter((s) => s.weak),
    nameSpans(text),
  ];
  return mergeSpans(lists.map((list) => list.filter((s) => types.has(s.type))));
}
