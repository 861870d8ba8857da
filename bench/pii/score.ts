// The PII evaluation (docs/pii.md): runs the redaction stage's detectors over the labelled calls of bench/pii/*.txt
// (the development set, then the held-out one, then both) and prints precision and recall per type and language, then checks that the redacted utterances (msg and words)
// keep no labelled text. Pure TypeScript, no engine: `npx tsx bench/pii/score.ts [--show]` (--show lists misses
// and false alarms).
//
// Definitions. An entity is the text inside ⟦type|…⟧ (or all the parts ⟦type#k|…⟧ of one call with the same k: an
// entity said across utterances). It is found when every non-space character of every part is inside a detected
// span of its type. A detected span is correct when it overlaps a labelled entity of its type; any other detected
// span (a near-miss, or a number of another type) is a false alarm. Precision = correct / detected spans, recall =
// found / entities.
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_MIN_DIGITS, PII_TYPES, type PiiType } from "../../src/domain/pii.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { detectPii, redactUtterances } from "../../src/pii/index.js";

const DIR = path.dirname(new URL(import.meta.url).pathname);
const LANGS = ["ko", "ja", "en"] as const;
const show = process.argv.includes("--show");

interface Part {
  utterance: number;
  start: number;
  end: number;
}
interface Entity {
  type: PiiType;
  parts: Part[];
  text: string;
}
interface Call {
  id: string;
  lang: string;
  utterances: Utterance[];
  entities: Entity[];
}

const MARK = /⟦([a-z_]+)(?:#(\d+))?\|([^⟧]*)⟧/gu;

function parse(file: string, lang: string): Call[] {
  const calls: Call[] = [];
  let call: Call | null = null;
  let split = new Map<string, Entity>();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("## ")) {
      call = { id: line.slice(3).split(" ")[0]!, lang, utterances: [], entities: [] };
      split = new Map();
      calls.push(call);
      continue;
    }
    const m = /^([AB]): (.*)$/u.exec(line);
    if (!m || !call) continue;
    const index = call.utterances.length;
    let msg = "";
    let at = 0;
    for (const e of m[2]!.matchAll(MARK)) {
      msg += m[2]!.slice(at, e.index);
      const part = { utterance: index, start: msg.length, end: msg.length + e[3]!.length };
      msg += e[3]!;
      at = e.index + e[0].length;
      const type = e[1] as PiiType;
      if (!PII_TYPES.includes(type)) throw new Error(`${file}: unknown type ${type}`);
      const key = e[2];
      const known = key ? split.get(key) : undefined;
      if (known) {
        known.parts.push(part);
        known.text += ` | ${e[3]}`;
      } else {
        const entity = { type, parts: [part], text: e[3]! };
        call.entities.push(entity);
        if (key) split.set(key, entity);
      }
    }
    msg += m[2]!.slice(at);
    // Words as a recognizer times them: split at spaces (for Japanese, every four characters).
    const pieces = lang === "ja" ? (msg.match(/.{1,4}/gsu) ?? []) : msg.split(/(?<=\s)/u);
    let t = index * 10_000;
    const words = pieces
      .map((p) => ({ start_at: (t += 300), duration: 250, text: p.trim() }))
      .filter((w) => w.text.length > 0);
    call.utterances.push({ start_at: index * 10_000, duration: 9000, msg, spk: m[1] === "A" ? 0 : 1, lang, words });
  }
  return calls;
}

type Count = { tp: number; fp: number; found: number; total: number };
function score(label: string, suffixes: readonly string[]): void {
  const counts = new Map<string, Count>();
  const count = (lang: string, type: string): Count => {
    const key = `${lang}\t${type}`;
    if (!counts.has(key)) counts.set(key, { tp: 0, fp: 0, found: 0, total: 0 });
    return counts.get(key)!;
  };
  let leaks = 0;
  let entitiesTotal = 0;
  const started = process.cpuUsage();
  const wall = Date.now();
  let chars = 0;

  for (const lang of LANGS) {
    for (const call of suffixes.flatMap((sfx) => parse(path.join(DIR, `${lang}${sfx}.txt`), lang))) {
      const offsets: number[] = [];
      let at = 0;
      for (const u of call.utterances) {
        offsets.push(at);
        at += u.msg.length + 1;
      }
      const text = call.utterances.map((u) => u.msg).join("\n");
      chars += text.length;
      const spans = detectPii(text, new Set(PII_TYPES));
      const gold = call.entities.map((e) => ({
        ...e,
        abs: e.parts.map((p) => ({ start: offsets[p.utterance]! + p.start, end: offsets[p.utterance]! + p.end })),
      }));
      for (const e of gold) {
        entitiesTotal++;
        const c = count(lang, e.type);
        c.total++;
        const covered = e.abs.every((p) => {
          for (let i = p.start; i < p.end; i++) {
            if (/\s/u.test(text[i]!)) continue;
            if (!spans.some((s) => s.type === e.type && s.start <= i && i < s.end)) return false;
          }
          return true;
        });
        if (covered) c.found++;
        else if (show) console.log(`MISS  ${call.id} ${e.type}: ${e.text}`);
      }
      for (const s of spans) {
        const c = count(lang, s.type);
        const hit = gold.some((e) => e.type === s.type && e.abs.some((p) => s.start < p.end && p.start < s.end));
        if (hit) c.tp++;
        else {
          c.fp++;
          if (show) console.log(`FALSE ${call.id} ${s.type}: ${JSON.stringify(text.slice(s.start, s.end))}`);
        }
      }
      // The stage itself: no labelled text (a number's digits, a name) may be left in msg or words.
      const redacted = redactUtterances(call.utterances, {
        types: PII_TYPES,
        mode: "mask",
        min_digits: DEFAULT_MIN_DIGITS,
        key: Buffer.alloc(32),
      });
      for (const e of call.entities) {
        for (const p of e.parts) {
          const said = call.utterances[p.utterance]!.msg.slice(p.start, p.end);
          const u = redacted[p.utterance]!;
          const words = (u.words ?? []).map((w) => w.text).join(" ");
          if (said.length >= 3 && (u.msg.includes(said) || words.includes(said))) {
            leaks++;
            if (show) console.log(`LEAK  ${call.id} ${e.type}: ${said}`);
          }
        }
      }
    }
  }

  const pct = (a: number, b: number): string => (b === 0 ? "   -  " : `${((100 * a) / b).toFixed(1).padStart(5)}%`);
  console.log(`\n== ${label}\nlang  type          entities  recall  detected  precision`);
  for (const lang of [...LANGS, "all"]) {
    for (const type of PII_TYPES) {
      const c =
        lang === "all"
          ? LANGS.map((l) => counts.get(`${l}\t${type}`)).reduce<Count>(
              (acc, x) => ({
                tp: acc.tp + (x?.tp ?? 0),
                fp: acc.fp + (x?.fp ?? 0),
                found: acc.found + (x?.found ?? 0),
                total: acc.total + (x?.total ?? 0),
              }),
              { tp: 0, fp: 0, found: 0, total: 0 },
            )
          : counts.get(`${lang}\t${type}`);
      if (!c) continue;
      console.log(
        `${lang.padEnd(5)} ${type.padEnd(13)} ${String(c.total).padStart(8)}  ${pct(c.found, c.total)}  ${String(c.tp + c.fp).padStart(8)}  ${pct(c.tp, c.tp + c.fp)}`,
      );
    }
  }
  const cpu = process.cpuUsage(started);
  console.log(
    `entities: ${entitiesTotal}; labelled text left in a redacted msg or words: ${leaks}; ` +
      `${chars} characters in ${((Date.now() - wall) / 1000).toFixed(2)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s CPU`,
  );
}

score("development set (the rules were written against it)", [""]);
score("held-out set (written after the rules were frozen)", ["-heldout"]);
score("both", ["", "-heldout"]);
