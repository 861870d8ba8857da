// Every utterance the refinement rule changes in a cached bench/refine-nbest.ts run, with the current text, the
// chosen hypothesis, both scores and what the change alone did to the file's normalized edit count (+ worse,
// - better): what the wrong edits have in common, to design a rule instead of tuning a margin.
//
//   npx tsx bench/refine/changes.ts /tmp/sori-refine-nbest/amr-n5/en-10.json en
import fs from "node:fs";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import type { Utterance } from "../../src/domain/utterance.js";
import type { RefineResult } from "../../src/engine/refineProtocol.js";
import { applyRefinement } from "../../src/refine/refiner.js";
import { DEFAULT_SELECT } from "../../src/refine/select.js";
import { normalEdits } from "../cer.js";

const [file, lang = "en"] = process.argv.slice(2);
if (!file) throw new Error("usage: changes.ts CACHE.json LANG");
const run = JSON.parse(fs.readFileSync(file, "utf8")) as {
  files: { file: string; ref: string; utterances: Utterance[]; raw: RefineResult }[];
};
const joiner = lang === "ja" ? "" : " ";
const config = parseJobConfig(
  JSON.stringify(lang === "ko" || lang === "ja" ? { language: lang } : { model_name: "whisper", language: lang }),
);
let [total, sum] = [0, 0];
for (const f of run.files) {
  const refined = applyRefinement(
    f.utterances,
    f.raw,
    config,
    { languages: null, agree: null, select: DEFAULT_SELECT },
    1,
  ).utterances;
  const base = f.utterances.map((u) => u.msg);
  for (const [i, u] of refined.entries()) {
    if (u.msg === base[i]) continue;
    const alone = base.map((m, j) => (j === i ? u.msg : m)).join(joiner);
    const delta = normalEdits(alone, f.ref, lang) - normalEdits(base.join(joiner), f.ref, lang);
    const span = f.raw.spans[i]!;
    const pick = span.hypotheses.find((h) => u.msg.includes(h.text.trim()) || h.text.trim() === u.msg);
    const rank = pick ? span.hypotheses.indexOf(pick) : -1;
    total++;
    sum += delta;
    console.log(
      `${delta > 0 ? "+" : ""}${delta}\t${f.file} #${i} (${(f.utterances[i]!.duration / 1000).toFixed(1)} s) rank ${rank} ` +
        `score ${span.current_score?.toFixed(3)} -> ${pick?.score?.toFixed(3)}\n\t- ${base[i]}\n\t+ ${u.msg}`,
    );
  }
}
console.log(`${total} changes, edits ${sum > 0 ? "+" : ""}${sum}`);
