// The naming rule of known speakers (src/speakers/match.ts, nameUtterances) over cases that bench/speakers.py
// prepares from real voiceprints: JSON on stdin, one array of names per case on stdout. `--rule JSON` overrides
// fields of SPEAKER_OPTIONS (bench/speakers.py --rule), so the rule is the service's own, not a copy.
import { nameUtterances, SPEAKER_OPTIONS } from "../src/speakers/index.js";

interface Case {
  clusters: { key: number; embedding: number[] | null; speechS: number; narrowband?: boolean }[];
  utterances: { cluster: number; embedding: number[] | null; speechS: number; narrowband?: boolean }[];
  enrolled: { id: string; name: string; embedding: number[]; embeddingPhone?: number[] | null }[];
}

const ruleArg = process.argv.indexOf("--rule");
const rule = { ...SPEAKER_OPTIONS, ...(ruleArg > 0 ? JSON.parse(process.argv[ruleArg + 1]!) : {}) };
const chunks: Buffer[] = [];
for await (const c of process.stdin) chunks.push(c as Buffer);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Case[];
const out = cases.map((c) => nameUtterances(c.clusters, c.utterances, c.enrolled, rule).map((e) => e?.id ?? null));
process.stdout.write(JSON.stringify({ rule, names: out }));
