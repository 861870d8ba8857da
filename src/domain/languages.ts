// Languages Whisper can recognise, by their ISO 639-1 code (the API's `lang`). Whisper's own tokens differ for two
// of them (jw, yue) and one has no ISO 639-1 code at all (haw), so we translate at the engine boundary.

const ISO_CODES = (
  "af am ar as az ba be bg bn bo br bs ca cs cy da de el en es et eu fa fi fo fr gl gu ha he hi hr ht hu hy id " +
  "is it ja jv ka kk km kn ko la lb ln lo lt lv mg mi mk ml mn mr ms mt my ne nl nn no oc pa pl ps pt ro ru sa " +
  "sd si sk sl sn so sq sr su sv sw ta te tg th tk tl tr tt uk ur uz vi yi yo zh"
).split(" ");

export const WHISPER_LANGUAGES: ReadonlySet<string> = new Set(ISO_CODES);

const TO_WHISPER: Record<string, string> = { jv: "jw" };
const FROM_WHISPER: Record<string, string> = { jw: "jv", yue: "zh" };

export const toWhisperLanguage = (iso: string): string => TO_WHISPER[iso] ?? iso;
export const fromWhisperLanguage = (code: string): string => FROM_WHISPER[code] ?? code;
