// The transcript as the model reads it, with what costs prompt tokens and carries no content taken out: prompt
// evaluation is most of an insight job's CPU (a 5-minute call is about 1,200 tokens, docs/enterprise.md), so every
// line kept must say something. Three rules, each with its reason:
// - an utterance that is only a backchannel (네, 예, 음, はい, yeah …) is dropped: it acknowledges, it states nothing;
// - consecutive utterances of one speaker are one turn (ASR and the paragraph splitter cut a turn into several
//   utterances, and each line would pay for its own speaker tag again);
// - speakers keep the diarizer's number as their tag ("[0]", "[1]"); a transcript with one speaker has no tags.
//   (Tagging them A, B like the worked examples was tried: the model then mixed the transcript up with the
//   examples, e.g. a restaurant booking summarised as a favour between friends; docs/enterprise.md.)
import type { Utterance } from "../domain/utterance.js";

// Whole-utterance acknowledgements in the service's languages, compared after punctuation and spaces are removed.
const BACKCHANNEL =
  /^(?:네|넵|예|응|음|어|아|흠|그렇죠|그렇군요|그래요|알겠습니다|はい|ええ|うん|ああ|えっと|そうですか|なるほど|yes|yeah|yep|ok|okay|mhm|mm|hmm|uhhuh|right|sure)+$/u;

export function isBackchannel(msg: string): boolean {
  return BACKCHANNEL.test(msg.toLowerCase().replace(/[\p{P}\p{S}\s]/gu, ""));
}

/** The transcript's lines for the prompt: "[spk] text" per turn, or plain lines for a single speaker. */
export function compactLines(utterances: readonly Utterance[]): string[] {
  const spoken = utterances.filter((u) => u.msg.trim());
  // Backchannels go only when something else was said: a transcript of nothing but "네" stays as it is.
  const kept = spoken.some((u) => !isBackchannel(u.msg)) ? spoken.filter((u) => !isBackchannel(u.msg)) : spoken;
  const turns: { spk: number; text: string }[] = [];
  for (const u of kept) {
    const last = turns.at(-1);
    if (last && last.spk === u.spk) last.text = `${last.text} ${u.msg.trim()}`;
    else turns.push({ spk: u.spk, text: u.msg.trim() });
  }
  if (new Set(turns.map((t) => t.spk)).size < 2) return turns.map((t) => t.text);
  return turns.map((t) => `[${t.spk}] ${t.text}`);
}
