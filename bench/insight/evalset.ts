// The insight evaluation set (bench/insight/eval-*.jsonl): written call, meeting and spam scripts in ko, ja and en,
// plus the reference transcripts of shared audio (read from ../shared/testdata/MANIFEST.tsv, not copied here).
// Each item has a labelled category and the key facts a summary must keep, each fact a list of accepted forms.
// Scoring: category accuracy, key-fact recall (a fact counts when any of its forms occurs in title + summary,
// spaces ignored), compression (summary length / transcript length) and copy rate (copy.ts).
import fs from "node:fs";
import path from "node:path";
import type { Utterance } from "../../src/domain/utterance.js";
import { manifest } from "../../test/helpers/cer.js";

export interface EvalItem {
  id: string;
  lang: string;
  category: string;
  facts: string[][];
  /** True for the long call used for the time figure (a 5-minute call). */
  long?: boolean;
  utterances: Utterance[];
}

interface RawItem {
  id: string;
  lang: string;
  category: string;
  facts: string[][];
  long?: boolean;
  source?: string;
  turns?: [string, string][];
}

/** "[spkA] text [spkB] text" (the manifest's multi-speaker form) or plain text into turns. */
function turnsOf(ref: string): [string, string][] {
  const parts = [...ref.matchAll(/\[([^\]]+)\]\s*([^[]*)/gu)].map((m) => [m[1]!, m[2]!.trim()] as [string, string]);
  return parts.length > 0 ? parts : [["A", ref.trim()]];
}

/** The items, languages interleaved (ko, ja, en, ko, ...) so that a run stopped early still covers all three. */
export function loadEvalSet(dir: string, testdata: string): EvalItem[] {
  const refs = manifest(testdata);
  const perFile: EvalItem[][] = [];
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    const items: EvalItem[] = [];
    perFile.push(items);
    for (const line of fs.readFileSync(path.join(dir, file), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const raw = JSON.parse(line) as RawItem;
      const turns = raw.turns ?? turnsOf(refs.get(raw.source ?? "") ?? "");
      if (turns.length === 0 || !turns[0]![1]) throw new Error(`${raw.id}: no transcript (source ${raw.source})`);
      const speakers = [...new Set(turns.map(([s]) => s))];
      let t = 0;
      const utterances = turns.map(([spk, msg]) => {
        const u: Utterance = { start_at: t, duration: 1000, msg, spk: speakers.indexOf(spk), lang: raw.lang };
        t += 1000;
        return u;
      });
      items.push({ id: raw.id, lang: raw.lang, category: raw.category, facts: raw.facts, long: raw.long, utterances });
    }
  }
  const longest = Math.max(...perFile.map((f) => f.length));
  return Array.from({ length: longest }, (_, i) => perFile.flatMap((f) => (f[i] ? [f[i]] : []))).flat();
}

const squash = (s: string): string => s.normalize("NFKC").toLowerCase().replace(/\s+/gu, "");

/** How many of the item's key facts the title and summary keep. */
export function factsKept(item: EvalItem, title: string, summary: string): number {
  const text = squash(`${title} ${summary}`);
  return item.facts.filter((forms) => forms.some((f) => text.includes(squash(f)))).length;
}
