// Which diarized speaker is which enrolled voice. A cluster (or channel) may only take its best voice, and only when
// that voice scores at least the threshold and beats the second best by the margin; two clusters never take the same
// name (the better score takes it, the other stays anonymous: a wrong name is worse than none). Then each utterance
// is checked against its own audio (nameUtterances), as diarization may have merged two people into one cluster.
// A voice heard on the phone (narrowband) is compared with each enrolled voice's phone print where it has one, by
// thresholds of their own (`phone*` in SpeakerOptions).
import type { SpeakerOptions } from "./options.js";
import { cosine } from "./voiceprint.js";

export interface Cluster<K> {
  key: K;
  /** Unit-norm; null when the cluster had too little speech to embed. */
  embedding: number[] | null;
  speechS: number;
  /** Heard on the phone: compared with the enrolled voices' phone prints. */
  narrowband?: boolean;
}

export interface Enrolled {
  id: string;
  name: string;
  embedding: number[];
  /** The voice as a phone line passes it; null or absent for voices enrolled before phone prints. */
  embeddingPhone?: number[] | null;
}

type Thresholds = Pick<SpeakerOptions, "threshold" | "keepThreshold" | "phoneThreshold" | "phoneKeepThreshold">;

/** A voice's score against each enrolled voice, with the thresholds that score is held to (its phone print's for a
 * narrowband voice, where the enrolled voice has one). */
function scoresOf(
  voice: { embedding: number[]; narrowband?: boolean | undefined },
  enrolled: readonly Enrolled[],
  opts: Thresholds,
): { score: number; threshold: number; keep: number }[] {
  return enrolled.map((e) => {
    const phone = voice.narrowband === true && e.embeddingPhone ? e.embeddingPhone : null;
    return phone
      ? { score: cosine(voice.embedding, phone), threshold: opts.phoneThreshold, keep: opts.phoneKeepThreshold }
      : { score: cosine(voice.embedding, e.embedding), threshold: opts.threshold, keep: opts.keepThreshold };
  });
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
  opts: Pick<SpeakerOptions, "margin" | "minSpeechS"> & Thresholds,
): Match<K>[] {
  const pairs: { c: number; e: number; score: number }[] = [];
  clusters.forEach((cl, c) => {
    if (!cl.embedding || cl.speechS < opts.minSpeechS) return;
    const scored = scoresOf({ embedding: cl.embedding, narrowband: cl.narrowband }, enrolled, opts);
    const order = scored.map((_, i) => i).sort((a, b) => scored[b]!.score - scored[a]!.score);
    const best = scored[order[0]!];
    const second = order[1] !== undefined ? scored[order[1]]!.score : -1;
    if (!best || best.score < best.threshold || best.score - second < opts.margin) return;
    pairs.push({ c, e: order[0]!, score: best.score });
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
  /** Heard on the phone: compared with the enrolled voices' phone prints. */
  narrowband?: boolean;
}

export type UtteranceRule = Pick<
  SpeakerOptions,
  | "threshold"
  | "margin"
  | "minSpeechS"
  | "utteranceMinS"
  | "keepThreshold"
  | "clusterAgreement"
  | "shortVeto"
  | "phoneThreshold"
  | "phoneKeepThreshold"
>;

/** The enrolled voice each utterance is named after, or null: the cluster's name (matchSpeakers) checked against
 * each utterance's own audio, so that a cluster holding two people (diarization merged them) never lends one
 * person's name to the other.
 * - An utterance with at least `utteranceMinS` of its own speech is checked: it keeps its cluster's name if that
 *   voice is its own best and scores at least `keepThreshold`; otherwise it takes the voice it alone passes by the
 *   cluster rule (threshold and margin) unless another cluster holds that name, or none.
 * - A shorter utterance cannot be told by itself: it takes its cluster's name only when the cluster's checked
 *   speech kept that name for at least `clusterAgreement` of it (or nothing of the cluster could be checked), and
 *   its own voice, where it could be embedded, scores at least `shortVeto` against that name's.
 * `spk` is never changed: a cluster whose parts are named differently is split by name only. */
export function nameUtterances<K>(
  clusters: readonly Cluster<K>[],
  utterances: readonly UtteranceVoice<K>[],
  enrolled: readonly Enrolled[],
  opts: UtteranceRule,
): (Enrolled | null)[] {
  const byCluster = new Map(matchSpeakers(clusters, enrolled, opts).map((m) => [m.key, m]));
  const byId = new Map(enrolled.map((e) => [e.id, e]));
  const holder = new Map([...byCluster.values()].map((m) => [m.id, m.key]));
  const checked = utterances.map((u): { own: Enrolled | null; keeps: boolean } | null => {
    if (!u.embedding || u.speechS < opts.utteranceMinS) return null;
    const scored = scoresOf({ embedding: u.embedding, narrowband: u.narrowband }, enrolled, opts);
    const order = scored.map((_, i) => i).sort((a, b) => scored[b]!.score - scored[a]!.score);
    const top = order[0] !== undefined ? { ...scored[order[0]]!, voice: enrolled[order[0]]! } : undefined;
    if (!top) return { own: null, keeps: false };
    const clusterName = byCluster.get(u.cluster);
    const keeps = clusterName !== undefined && top.voice.id === clusterName.id && top.score >= top.keep;
    const second = order[1] !== undefined ? scored[order[1]]!.score : -1;
    const passes = top.score >= top.threshold && top.score - second >= opts.margin;
    // a name another cluster holds is that cluster's: this utterance's voice is a similar one, or diarization split
    // the person (then this part stays anonymous, as its cluster does)
    const heldElsewhere = holder.has(top.voice.id) && holder.get(top.voice.id) !== u.cluster;
    return { own: passes && !heldElsewhere ? top.voice : null, keeps };
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
    const voice = byId.get(clusterName.id);
    if (!agreed || !voice) return null;
    const own = u.embedding ? scoresOf({ embedding: u.embedding, narrowband: u.narrowband }, [voice], opts)[0] : null;
    return own && own.score < opts.shortVeto ? null : voice;
  });
}
