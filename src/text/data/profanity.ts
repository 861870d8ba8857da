// Profanity lists for the profanity filter (data only; the matching rules are in ../profanity.ts).
// Sources and licenses: see README.md in this folder. Entries marked by language:
//   ko: swear words of the LDNOOBW Korean list (CC BY 4.0) that are insults in any context, plus common spellings
//       and jamo abbreviations added for sori; words of that list that are also ordinary words (망가, 유모, 노모,
//       자위, 변태, 고자, 야사, 에로, 근친 ...) are left out on purpose.
//   ja: insults and obscenities from the LDNOOBW Japanese list (CC BY 4.0), ordinary words of that list
//       (嫌い, 女の子, 人種, 支配, 裸, 誘惑 ...) left out; plus 死ね, きちがい added for sori.
//   en: the swear words of the LDNOOBW English list (CC BY 4.0); anatomical and descriptive terms left out.

/** Korean: matched inside words ("개새끼야") and spaced out ("씨 발"). */
export const PROFANITY_KO: readonly string[] = [
  "씨발", "시발", "씨빨", "씨팔", "시발놈", "시발년", "씨발놈", "씨발년", "씨바", "씨부랄", "씨부럴", "ㅆㅂ", "ㅅㅂ", "ㅆ발", "ㅅ발", "씨ㅂ", "시ㅂ",
  "개새끼", "개새기", "개색기", "개색끼", "개세끼", "개자식", "개좆", "개같은", "개소리", "ㄱㅅㄲ", "새끼야",
  "병신", "븅신", "빙신", "ㅂㅅ", "좆", "좃같", "좆같", "ㅈ같", "존나", "졸라", "ㅈㄴ", "지랄", "ㅈㄹ", "염병", "옘병", "엠병",
  "미친놈", "미친년", "미친새끼", "ㅁㅊ", "또라이", "썅", "쌍놈", "쌍년", "쌍노무", "상노무", "잡년", "화냥년", "호로새끼", "후레자식", "니기미", "니미럴",
  "씹새끼", "씹할", "씹년", "씹창", "엿먹어", "느금마", "니애미", "애미뒤진", "뒤져라", "뒈져",
];

/** Words that contain a Korean entry and are not profane: the match is skipped inside them. */
export const PROFANITY_KO_EXCEPTIONS: readonly string[] = ["시발점", "시발역", "시발택시"];

/** Japanese: matched inside text (no spaces). */
export const PROFANITY_JA: readonly string[] = [
  "死ね", "しね", "シネ", "くたばれ", "きちがい", "キチガイ", "気違い", "ちんこ", "チンコ", "まんこ", "マンコ", "オマンコ", "やりまん",
  "ファック", "マザー・ファッカー", "ビッチ", "クソ野郎", "くそったれ", "クソッタレ", "ぶっ殺す", "売春婦", "ニガー",
];

/** English: matched as whole words, case-insensitive. */
export const PROFANITY_EN: readonly string[] = [
  "fuck", "fucks", "fucked", "fucker", "fuckers", "fucking", "motherfucker", "motherfuckers", "motherfucking", "clusterfuck",
  "shit", "shits", "shitty", "bullshit", "apeshit", "horseshit", "bitch", "bitches", "bastard", "bastards", "asshole", "assholes",
  "arsehole", "cunt", "cunts", "dickhead", "cocksucker", "twat", "wanker", "bollocks", "slut", "sluts", "whore",
  "whores", "nigger", "niggers", "faggot", "faggots", "goddamn",
];
