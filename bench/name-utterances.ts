// The naming rule of known speakers (src/speakers/match.ts, nameUtterances) over cases that bench/speakers.py
// prepares from real voiceprints: JSON on stdin, the rule (SPEAKER_OPTIONS) and one array of names per case on
// stdout, so the rule is the service's own, not a copy.
import { nameUtterances, SPEAKER_OPTIONS } from "../src/speakers/index.js";

interface Case {
  clusters: { key: number; embedding: number[] | null; speechS: number; narrowband?: boolean }[];
  utterances: { cluster: number; embedding: number[] | null; speechS: number; narrowband?: boolean }[];
  enrolled: { id: string; name: string; embedding: number[]; embeddingPhone?: number[] | null }[];
}

const rule = SPEAKER_OPTIONS;
const chunks: Buffer[] = [];
for await (const c of process.stdin) chunks.push(c as Buffer);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Case[];
const out = cases.map((c) => nameUtterances(c.clusters, c.utterances, c.enrolled, rule).map((e) => e?.id ?? null));
process.stdout.write(JSON.stringify({ rule, names: out }));
