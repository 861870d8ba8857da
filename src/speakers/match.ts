// Which diarized speaker is which enrolled voice. A cluster (or channel) may only take its best voice, and only when
// that voice scores at least the threshold and beats the second best by the margin; two clusters never take the same
// name (the better score takes it, the other stays anonymous: a wrong name is worse than none). Then each utterance
// is checked against its own audio (nameUtterances), as diarization may have merged two people into one cluster.
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

/** One utterance's own voice: its speech, less what other speakers' turns overlap, embedded alone. */
export interface UtteranceVoice<K> {
  /** The cluster (or channel) the utterance belongs to. */
  cluster: K;
  /** Unit-norm; null when the utterance had too little speech to embed. */
  embedding: number[] | null;
  speechS: number;
}

export type UtteranceRule = Pick<
  SpeakerOptions,
  "threshold" | "margin" | "minSpeechS" | "utteranceMinS" | "keepThreshold" | "clusterAgreement"
>;

/** The enrolled voice each utterance is named after, or null: the cluster's name (matchSpeakers) checked against
 * each utterance's own audio, so that a cluster holding two people (diarization merged them) never lends one
 * person's name to the other.
 * - An utterance with at least `utteranceMinS` of its own speech is checked: it keeps its cluster's name if that
 *   voice is its own best and scores at least `keepThreshold`; otherwise it takes the voice it alone passes by the
 *   cluster rule (threshold and margin), or none.
 * - A shorter utterance cannot be told by itself: it takes its cluster's name only when the cluster's checked
 *   speech kept that name for at least `clusterAgreement` of it (or nothing of the cluster could be checked).
 * `spk` is never changed: a cluster whose parts are named differently is split by name only. */
export function nameUtterances<K>(
  clusters: readonly Cluster<K>[],
  utterances: readonly UtteranceVoice<K>[],
  enrolled: readonly Enrolled[],
  opts: UtteranceRule,
): (Enrolled | null)[] {
  const byCluster = new Map(matchSpeakers(clusters, enrolled, opts).map((m) => [m.key, m]));
  const byId = new Map(enrolled.map((e) => [e.id, e]));
  const checked = utterances.map((u): { own: Enrolled | null; keeps: boolean } | null => {
    if (!u.embedding || u.speechS < opts.utteranceMinS) return null;
    const scores = enrolled.map((e) => cosine(u.embedding!, e.embedding));
    const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
    const best = order[0];
    const clusterName = byCluster.get(u.cluster);
    const keeps =
      clusterName !== undefined &&
      best !== undefined &&
      enrolled[best]!.id === clusterName.id &&
      scores[best]! >= opts.keepThreshold;
    const passes =
      best !== undefined &&
      scores[best]! >= opts.threshold &&
      scores[best]! - (order[1] !== undefined ? scores[order[1]]! : -1) >= opts.margin;
    return { own: passes ? enrolled[best!]! : null, keeps };
  });
  const agreement = new Map<K, { kept: number; all: number }>();
  utterances.forEach((u, i) => {
    const c = checked[i];
    if (!c || !byCluster.has(u.cluster)) return;
    const a = agreement.get(u.cluster) ?? { kept: 0, all: 0 };
    a.all += u.speechS;
    if (c.keeps) a.kept += u.speechS;
    agreement.set(u.cluster, a);
  });
  return utterances.map((u, i) => {
    const c = checked[i];
    const clusterName = byCluster.get(u.cluster);
    if (c) return c.keeps && clusterName ? (byId.get(clusterName.id) ?? null) : c.own;
    if (!clusterName) return null;
    const a = agreement.get(u.cluster);
    const agreed = !a || a.all === 0 || a.kept >= opts.clusterAgreement * a.all;
    return agreed ? (byId.get(clusterName.id) ?? null) : null;
  });
}
