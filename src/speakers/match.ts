// Which diarized speaker is which enrolled voice: per speaker cluster (or channel), never per utterance, and two
// clusters never take the same name. A cluster may only take its best voice, and only when that voice scores at
// least the threshold and beats the second best by the margin; when two clusters pass for one voice, the better
// score takes it and the other stays anonymous (a wrong name is worse than none).
import type { SpeakerOptions } from "./options.js";
import { cosine } from "./voiceprint.js";

export interface Cluster<K> {
  key: K;
  /** Unit-norm; null when the cluster had too little speech to embed. */
  embedding: number[] | null;
  speechS: number;
}

export interface Enrolled {
  id: string;
  name: string;
  embedding: number[];
}

export interface Match<K> {
  key: K;
  id: string;
  name: string;
  score: number;
}

export function matchSpeakers<K>(
  clusters: readonly Cluster<K>[],
  enrolled: readonly Enrolled[],
  opts: Pick<SpeakerOptions, "threshold" | "margin" | "minSpeechS">,
): Match<K>[] {
  const pairs: { c: number; e: number; score: number }[] = [];
  clusters.forEach((cl, c) => {
    if (!cl.embedding || cl.speechS < opts.minSpeechS) return;
    const scores = enrolled.map((en) => cosine(cl.embedding!, en.embedding));
    const sorted = [...scores].sort((a, b) => b - a);
    const best = sorted[0] ?? -1;
    const second = sorted[1] ?? -1;
    if (best < opts.threshold || best - second < opts.margin) return;
    pairs.push({ c, e: scores.indexOf(best), score: best });
  });
  pairs.sort((a, b) => b.score - a.score);
  const usedE = new Set<number>();
  const out: Match<K>[] = [];
  for (const p of pairs) {
    if (usedE.has(p.e)) continue;
    usedE.add(p.e);
    out.push({ key: clusters[p.c]!.key, id: enrolled[p.e]!.id, name: enrolled[p.e]!.name, score: p.score });
  }
  return out;
}
