// Filler words per language, for the disfluency filter. Compiled for sori from common transcription conventions
// (the fillers that Korean, Japanese and English verbatim-transcription guidelines mark as disfluencies); no
// third-party list. FILLERS are removed wherever they stand as a whole word; AMBIGUOUS_FILLERS are also real words
// and are removed only when speech marks them as fillers (a comma or ellipsis after them, a long vowel).
export const FILLERS: Record<"ko" | "ja" | "en", readonly string[]> = {
  ko: ["음", "음음", "으음", "어", "어어", "어어어", "으", "으으", "아", "아아", "에", "에에", "흠", "엄", "어음"],
  ja: [
    "えー",
    "えっと",
    "えーっと",
    "ええと",
    "えーと",
    "あー",
    "うーん",
    "うん、うん",
    "んー",
    "あのー",
    "そのー",
    "まー",
  ],
  en: ["um", "umm", "uh", "uhh", "erm", "er", "hmm", "mm", "ah"],
};

export const AMBIGUOUS_FILLERS: Record<"ko" | "ja" | "en", readonly string[]> = {
  ko: ["그", "저", "뭐", "이제", "약간", "그냥", "막", "저기"],
  ja: ["あの", "その", "まあ", "なんか"],
  en: ["like"],
};
