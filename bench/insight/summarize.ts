// The insight figures of a run's per-item lines (bench/enterprise.ts prints one per transcript as it finishes), so
// that a run stopped before the end of the set (a slow, shared machine) still gives its figures over the items done:
//
//   npx tsx bench/insight/summarize.ts < insight-run.log
import fs from "node:fs";
import { MAX_COPY_RATE } from "../../src/insight/schema.js";

const ITEM =
  /^\s+(\S+) \((\d+) chars, ([\d.]+) s CPU, ([\d.]+) s wall\) (ok|WRONG \(\S+\)|FAILED)(?: \(item label (\S+)\))?(?: facts (\d+)\/(\d+) copy ([\d.]+): (.*))?/u;
const LONG = /^\s+long call (\S+) \((\d+) chars, ([\d.]+) s CPU, ([\d.]+) s wall\)/u;
const longIds = new Set<string>();

// Logs of the category-recheck runs (taken out since) print "(item label X)" where the recheck changed it.
let itemRight = 0;
let rechecked = false;
let [n, right, facts, factsAll, failed, copies, sameTitle, compression, copy, maxCopy, cpu, wall, short] = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];
const byLang = new Map<string, [number, number]>();
for (const line of fs.readFileSync(0, "utf8").split("\n")) {
  const l = LONG.exec(line);
  if (l) {
    longIds.add(l[1]!);
    console.log(`long call ${l[1]}: ${l[2]} chars, ${l[3]} s CPU, ${l[4]} s wall`);
    continue;
  }
  const m = ITEM.exec(line);
  if (!m) continue;
  const [, id, chars, c, w, verdict, firstLabel, kept, all, cr, json] = m;
  n++;
  if (!longIds.has(id!)) [cpu, wall, short] = [cpu + Number(c), wall + Number(w), short + 1];
  const lang = id!.slice(0, 2);
  const tally = byLang.get(lang) ?? [0, 0];
  byLang.set(lang, [tally[0] + (verdict === "ok" ? 1 : 0), tally[1] + 1]);
  if (verdict === "FAILED") {
    failed++;
    continue;
  }
  const item = JSON.parse(json!) as { title: string; summary: string };
  right += verdict === "ok" ? 1 : 0;
  // The item's own label (before the category recheck): printed only where the recheck changed it.
  const expected = verdict === "ok" ? null : verdict!.slice(7, -1);
  itemRight += firstLabel ? (firstLabel === expected ? 1 : 0) : verdict === "ok" ? 1 : 0;
  rechecked ||= firstLabel !== undefined;
  facts += Number(kept);
  factsAll += Number(all);
  compression += item.summary.length / Number(chars);
  copy += Number(cr);
  maxCopy = Math.max(maxCopy, Number(cr));
  copies += Number(cr) >= MAX_COPY_RATE ? 1 : 0;
  sameTitle += item.title === item.summary ? 1 : 0;
}
const pct = (a: number, b: number): string => `${((100 * a) / Math.max(1, b)).toFixed(1)} % (${a}/${b})`;
const ok = n - failed;
console.log(`${n} transcripts, ${failed} failed (failed items count as wrong and as 0 facts kept)`);
console.log(
  `  category accuracy ${pct(right, n)}; by language ${[...byLang].map(([l, [r, t]]) => `${l} ${r}/${t}`).join(", ")}`,
);
if (rechecked) console.log(`  the item's own label (before the category recheck): ${pct(itemRight, n)}`);
console.log(`  key-fact recall ${pct(facts, factsAll)} (of the items that answered)`);
console.log(
  `  compression ${(compression / Math.max(1, ok)).toFixed(2)}, copy rate mean ${(copy / Math.max(1, ok)).toFixed(2)} max ${maxCopy.toFixed(2)}, verbatim copies (>= ${MAX_COPY_RATE}) ${copies}, title = summary ${sameTitle}`,
);
console.log(
  `  per job (short items, n=${short}): ${(cpu / Math.max(1, short)).toFixed(1)} s CPU, ${(wall / Math.max(1, short)).toFixed(1)} s wall`,
);
