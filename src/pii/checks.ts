// The checks that tell a structured number from any other string of digits: check digits where the number has
// one (Luhn for cards, My Number's mod-11), and the fixed structure where it has none (a resident registration
// number's birth date and sex digit, an SSN's area, group and serial, the numbering plans of phones).

/** Luhn (ISO/IEC 7812): every card number's last digit. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** A card number: 13 to 19 digits, an issuer's first digit (Amex/JCB/Diners 3, Visa 4, Mastercard 2/5, Discover
 * and UnionPay 6, Korean domestic cards 9) and a valid Luhn digit. */
export const isCard = (d: string): boolean => d.length >= 13 && d.length <= 19 && /^[234569]/u.test(d) && luhn(d);

const validDate = (yy: number, mm: number, dd: number): boolean => {
  if (mm < 1 || mm > 12 || dd < 1) return false;
  return dd <= new Date(Date.UTC(yy, mm, 0)).getUTCDate();
};

/**
 * Korea's resident registration number: YYMMDD, then a digit for century and sex (1-4 citizens, 5-8 foreign
 * residents, 9/0 born before 1900), then six more. Numbers issued before October 2020 end with a check digit; later
 * ones end with random digits, so the check digit cannot be required, and the birth date carries the weight.
 */
export function isRrn(d: string): boolean {
  if (!/^\d{13}$/u.test(d)) return false;
  const s = Number(d[6]);
  if (s === 0 || s === 9) return false;
  const century = s === 1 || s === 2 || s === 5 || s === 6 ? 1900 : 2000;
  return validDate(century + Number(d.slice(0, 2)), Number(d.slice(2, 4)), Number(d.slice(4, 6)));
}

/** Whether the RRN's last digit is its check digit (true of every number issued before October 2020). */
export function rrnChecksum(d: string): boolean {
  const w = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5];
  const sum = w.reduce((acc, k, i) => acc + k * Number(d[i]), 0);
  return (11 - (sum % 11)) % 10 === Number(d[12]);
}

/** Japan's My Number (個人番号): 12 digits, the last a mod-11 check digit (総務省令 第5条). */
export function isMyNumber(d: string): boolean {
  if (!/^\d{12}$/u.test(d)) return false;
  let sum = 0;
  for (let n = 1; n <= 11; n++) {
    const p = Number(d[11 - n]);
    const q = n <= 6 ? n + 1 : n - 5;
    sum += p * q;
  }
  const r = sum % 11;
  return (r <= 1 ? 0 : 11 - r) === Number(d[11]);
}

/** A US Social Security number: area 001-899 but not 666, group 01-99, serial 0001-9999 (no check digit). */
export function isSsn(d: string): boolean {
  if (!/^\d{9}$/u.test(d)) return false;
  const area = Number(d.slice(0, 3));
  return area > 0 && area < 900 && area !== 666 && d.slice(3, 5) !== "00" && d.slice(5) !== "0000";
}

/** Phone numbers of the three numbering plans, by their prefixes and lengths; country codes allowed. */
const PHONE_KO = /^(?:82|0)(?:1[016789]\d{7,8}|2\d{7,8}|[3-6][1-5]\d{7,8}|70\d{8}|50\d{8,9}|80\d{7,8})$/u;
const PHONE_JA = /^(?:81|0)(?:[789]0\d{8}|[1-9]\d{8}|120\d{6}|800\d{7})$/u;
const PHONE_NANP = /^1?[2-9]\d{2}[2-9]\d{6}$/u;
/** Toll-free and nationwide numbers belong to businesses (a support line), never to a person: 0120/0800 and Japan's
 * 0570 (Navi Dial), Korea's 10-digit 080 and its 8-digit 15XX/16XX/18XX numbers (전국대표번호), 1-8XX. (Japan's
 * 080 numbers have 11 digits and are mobiles.) */
const TOLL_FREE = /^(?:0120|0800|0570\d{6}$|080\d{7}$|1[568]\d{6}$|1?8(?:00|88|77|66|55|44|33))/u;

/** Mobile numbers: a form so specific (010-, 090- with 11 digits) that it outweighs a cue of another type. */
const MOBILE = /^(?:0|82)1[016789]\d{7,8}$|^(?:0|81)[789]0\d{8}$/u;
export const isMobile = (d: string): boolean => MOBILE.test(d);

export const isTollFree = (d: string): boolean => TOLL_FREE.test(d);
/** Korea's nationwide numbers (15XX/16XX/18XX-XXXX): no person's number has their form, even garbled (a person's
 * starts with 0), so they stay even next to a phone cue. */
export const isNationwide = (d: string): boolean => /^1[568]\d{6}$/u.test(d);
export const isKoJaPhone = (d: string): boolean => (PHONE_KO.test(d) || PHONE_JA.test(d)) && !TOLL_FREE.test(d);
export const isNanpPhone = (d: string): boolean => PHONE_NANP.test(d) && !TOLL_FREE.test(d);
