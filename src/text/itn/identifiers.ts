// Digit strings that name something rather than count it: phone, card and account numbers, codes. With ITN off
// (written → spoken) they are read digit by digit, group by group ("four one one one, one one one one …"), as
// people say them; every other number is read as a quantity. Korean does the same for phone numbers (ko.ts).
import { type Edit, regexEdits } from "../edits.js";

/** Groups of digits joined by single spaces or dashes, an area code in brackets, a leading plus. */
const GROUPS = /(?<![0-9A-Za-z.,:/])\+?(?:\(\d+\)|\d+)(?:(?: |-| - |\) ?|-?\()?\d+\)?)*(?![0-9]|[.,]\d)/gu;
const DATE = /^(?:19|20)\d\d-\d\d?-\d\d?$|^(?:19|20)\d\d-(?:19|20)\d\d$/u;

/** Whether a written number is an identifier: dash or bracket groups, two or more groups of three or more digits,
 * a leading zero, or seven digits and more in one piece (quantities are written with thousands commas). */
export function isIdentifier(written: string): boolean {
  if (DATE.test(written)) return false;
  const groups = written.match(/\d+/gu) ?? [];
  const digits = groups.join("").length;
  if (groups.length === 1) return /^\+?0\d/u.test(written) || digits >= 7;
  if (/[-()]/u.test(written)) return digits >= 6 && groups.filter((g) => g.length >= 3).length >= 2;
  return groups.every((g) => g.length >= 3) && digits >= 6;
}

/** Edits that read each identifier of `text` group by group with `read` (digits → spoken digits). */
export function identifierEdits(
  text: string,
  read: (digits: string) => string,
  separator: string,
  plus: string,
): Edit[] {
  return regexEdits(text, GROUPS, (m) => {
    const written = m[0].replace(/[\s-]+$/u, "");
    if (!isIdentifier(written)) return null;
    const spoken = (written.match(/\d+/gu) ?? []).map(read).join(separator);
    const tail = m[0].slice(written.length);
    return (written.startsWith("+") ? plus : "") + spoken + tail;
  });
}
