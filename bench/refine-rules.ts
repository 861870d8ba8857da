// Candidate refinement rules judged on the same decodes (docs/enterprise.md, "Refinement"): for each part of
// bench/refine/parts.py (development and held-out, ko and ja, each also at 8 kHz), every file is transcribed and
// its utterances decoded again with CANDIDATE_DECODES once (bench/refine/collect.ts, cached), then each rule below
// is applied with the service's own function (applyRefinement). Prints per part and rule: normalized CER (test/helpers/cer.ts:
// NFKC, numbers verbalized, punctuation and spaces removed; corpus level, edits / reference characters), utterances
// changed, and of those how many made their file's transcript better / worse (each change alone), then the
// engine's CPU seconds per audio minute for the base pass and for the candidate decodes.
//
//   .venv/bin/python bench/refine/parts.py --deeply DEEPLY_GIT_DIR --out /tmp/sori-refine-parts
//   flock ~/.sori-bench.lock npx tsx bench/refine-rules.ts --parts /tmp/sori-refine-parts
//   npx tsx bench/refine-rules.ts --show agree3 --only ko-held   # every change one rule makes, with its effect
import path from "node:path";
import { parseArgs } from "node:util";
import type { RefineResult } from "../src/engine/refineProtocol.js";
import { applyRefinement, DEFAULT_RULE, type RefineRule } from "../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../src/refine/select.js";
import { normalEdits, Tally } from "../test/helpers/cer.js";
import { collect, type FileRun, jobConfigOf, type PartRun } from "./refine/collect.js";

const { values: args } = parseArgs({
  options: {
    parts: { type: "string", default: "/tmp/sori-refine-parts" },
    cache: { type: "string", default: "/tmp/sori-refine-cache" },
    only: { type: "string", default: "ko-dev,ja-dev,ko-dev-8k,ja-dev-8k,ko-held,ja-held,ko-held-8k,ja-held-8k" },
    show: { type: "string" },
  },
});

/** Which of CANDIDATE_DECODES a rule reads: 0 beam 5 (the best of its 5), 1 greedy, 2 beam 5 with the prompt. */
interface Candidate {
  name: string;
  decodes: number[];
  rule: RefineRule;
  /** The earlier rule: the 5 best texts of decode 0, each scored. */
  nbest?: boolean;
}

const agree = (minVotes: number, margin: number | null, maxEditLetters: number | null = null, protectedVotes = 3) => ({
  languages: null,
  agree: { minVotes, protectedVotes, margin, maxEditLetters },
  select: DEFAULT_SELECT,
});
const CANDIDATES: Candidate[] = [
  {
    name: "score (earlier default)",
    decodes: [0],
    rule: { languages: null, agree: null, select: DEFAULT_SELECT },
    nbest: true,
  },
  { name: "agree 3/3", decodes: [0, 1, 2], rule: agree(3, null) },
  { name: "agree 3/3 + score veto", decodes: [0, 1, 2], rule: agree(3, 0) },
  { name: "agree 3/3 + score veto 0.05", decodes: [0, 1, 2], rule: agree(3, 0.05) },
  { name: "agree 2/3 (numbers 3/3)", decodes: [0, 1, 2], rule: agree(2, null) },
  { name: "agree 2/3 + score veto", decodes: [0, 1, 2], rule: agree(2, 0) },
  { name: "agree 2/2 beam+prompt", decodes: [0, 2], rule: agree(2, null) },
  { name: "agree 2/2 beam+greedy", decodes: [0, 1], rule: agree(2, null) },
  { name: "agree 3/3 + veto, numbers never", decodes: [0, 1, 2], rule: agree(3, 0, null, 4) },
  { name: "agree 3/3 + veto 0.05, numbers never", decodes: [0, 1, 2], rule: agree(3, 0.05, null, 4) },
  { name: "agree 3/3 + veto, edits ≤ 2 letters", decodes: [0, 1, 2], rule: agree(3, 0, 2) },
  { name: "agree 3/3 + veto, edits ≤ 3 letters", decodes: [0, 1, 2], rule: agree(3, 0, 3) },
  { name: "agree 3/3 + veto 0.05, edits ≤ 2 letters", decodes: [0, 1, 2], rule: agree(3, 0.05, 2) },
  { name: "agree 3/3 + veto, edits ≤ 2, numbers never", decodes: [0, 1, 2], rule: agree(3, 0, 2, 4) },
  { name: "agree 3/3 + veto 0.05, edits ≤ 2, numbers never", decodes: [0, 1, 2], rule: agree(3, 0.05, 2, 4) },
  { name: "agree 2/3 + veto, edits ≤ 2 letters", decodes: [0, 1, 2], rule: agree(2, 0, 2) },
  { name: "agree 2/3 + veto 0.05, edits ≤ 2, numbers never", decodes: [0, 1, 2], rule: agree(2, 0.05, 2, 4) },
];

/** The engine's output as a rule reading only some decodes would have had it. */
function view(raw: RefineResult, c: Candidate): RefineResult {
  return {
    spans: raw.spans.map((s) => {
      const decoded = s.decoded ?? [];
      if (c.nbest) {
        const mine = new Set(decoded[0] ?? []);
        return { ...s, hypotheses: s.hypotheses.filter((h) => mine.has(h.text)), decoded: [decoded[0] ?? []] };
      }
      return { ...s, decoded: c.decodes.map((d) => (decoded[d] ?? []).slice(0, 1)) };
    }),
  };
}

interface Outcome {
  tally: Tally;
  changed: number;
  better: number;
  worse: number;
  shown: string[];
}

function judge(run: PartRun, c: Candidate, show: boolean): Outcome {
  const joiner = run.lang === "ja" ? "" : " ";
  const o: Outcome = { tally: new Tally(), changed: 0, better: 0, worse: 0, shown: [] };
  for (const f of run.files) {
    const r = applyRefinement(f.utterances, view(f.raw, c), jobConfigOf(run.lang), c.rule, c.decodes.length);
    const base = f.utterances.map((u) => u.msg);
    o.tally.add(r.utterances.map((u) => u.msg).join(joiner), f.ref, run.lang);
    const e0 = normalEdits(base.join(joiner), f.ref, run.lang);
    r.utterances.forEach((u, i) => {
      if (u.msg === base[i]) return;
      o.changed++;
      const alone = normalEdits(base.map((m, j) => (j === i ? u.msg : m)).join(joiner), f.ref, run.lang) - e0;
      if (alone < 0) o.better++;
      if (alone > 0) o.worse++;
      if (show) o.shown.push(`${alone > 0 ? "+" : ""}${alone}\t${f.file} #${i}\n\t- ${base[i]}\n\t+ ${u.msg}`);
    });
  }
  return o;
}

const rate = (t: Tally): string => `${((100 * t.norm[0]!) / t.norm[1]!).toFixed(1)} % (${t.norm[0]}/${t.norm[1]})`;
const minutes = (files: FileRun[]): number => files.reduce((s, f) => s + f.seconds, 0) / 60;

const header = ["rule", ...args.only!.split(",")];
const rows: string[][] = [["base (no refinement)"], ...CANDIDATES.map((c) => [c.name])];
const cpu: string[] = [];
for (const part of args.only!.split(",")) {
  const lang = part.slice(0, 2);
  const run = await collect(path.join(args.parts!, part), lang, path.join(args.cache!, `${part}.json`));
  const base = new Tally();
  for (const f of run.files) base.add(f.utterances.map((u) => u.msg).join(lang === "ja" ? "" : " "), f.ref, lang);
  const utterances = run.files.reduce((s, f) => s + f.utterances.length, 0);
  rows[0]!.push(`${rate(base)}, ${run.files.length} files, ${utterances} utt.`);
  CANDIDATES.forEach((c, k) => {
    const o = judge(run, c, args.show === c.name);
    rows[k + 1]!.push(`${rate(o.tally)}, ${o.changed} ch. +${o.better}/−${o.worse}`);
    for (const line of o.shown) console.log(`${part} ${line}`);
  });
  const m = minutes(run.files);
  cpu.push(
    `${part}: ${(m * 60).toFixed(0)} s audio; engine CPU s per audio minute: base ${(run.cpu.base / m).toFixed(1)}, candidate decodes ${(run.cpu.refine / m).toFixed(1)}`,
  );
}
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
for (const line of cpu) console.log(line);
console.log(`service default: ${JSON.stringify(DEFAULT_RULE)}`);
