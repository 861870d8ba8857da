// A literal string as a regular expression that matches only it (the text stages build their patterns from word
// lists).
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
