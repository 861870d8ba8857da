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
import { detectPii, redactUtterances, type Span } from "../../src/pii/index.js";

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
/** An ordinary number (⟪kind|…⟫ in the ASR-shaped files): a price, date, time, count or code that must stay. */
interface Ordinary {
  kind: string;
  part: Part;
  text: string;
}
interface Call {
  id: string;
  lang: string;
  utterances: Utterance[];
  entities: Entity[];
  ordinary: Ordinary[];
}

const MARK = /⟦([a-z_]+)(?:#(\d+))?\|([^⟧]*)⟧|⟪([a-z]+)\|([^⟫]*)⟫/gu;

function parse(file: string, lang: string): Call[] {
  const calls: Call[] = [];
  let call: Call | null = null;
  let split = new Map<string, Entity>();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("## ")) {
      call = { id: line.slice(3).split(" ")[0]!, lang, utterances: [], entities: [], ordinary: [] };
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
      at = e.index + e[0].length;
      if (e[4]) {
        call.ordinary.push({
          kind: e[4],
          part: { utterance: index, start: msg.length, end: msg.length + e[5]!.length },
          text: e[5]!,
        });
        msg += e[5]!;
        continue;
      }
      const part = { utterance: index, start: msg.length, end: msg.length + e[3]!.length };
      msg += e[3]!;
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

type Count = { tp: number; fp: number; found: number; masked: number; total: number };
const ZERO: Count = { tp: 0, fp: 0, found: 0, masked: 0, total: 0 };
const add = (a: Count, b: Count | undefined): Count => ({
  tp: a.tp + (b?.tp ?? 0),
  fp: a.fp + (b?.fp ?? 0),
  found: a.found + (b?.found ?? 0),
  masked: a.masked + (b?.masked ?? 0),
  total: a.total + (b?.total ?? 0),
});

/** Scores the calls of the files named by `file(lang)` for each language. */
function score(label: string, files: readonly ((lang: string) => string)[]): void {
  const counts = new Map<string, Count>();
  const count = (lang: string, type: string): Count => {
    const key = `${lang}\t${type}`;
    if (!counts.has(key)) counts.set(key, { ...ZERO });
    return counts.get(key)!;
  };
  const ordinary = new Map<string, { kept: number; total: number }>();
  let leaks = 0;
  let entitiesTotal = 0;
  const started = process.cpuUsage();
  const wall = Date.now();
  let chars = 0;

  for (const lang of LANGS) {
    const calls = files.flatMap((file) => {
      const name = path.join(DIR, file(lang));
      return fs.existsSync(name) ? parse(name, lang) : [];
    });
    for (const call of calls) {
      const offsets: number[] = [];
      let at = 0;
      for (const u of call.utterances) {
        offsets.push(at);
        at += u.msg.length + 1;
      }
      const text = call.utterances.map((u) => u.msg).join("\n");
      chars += text.length;
      const spans = detectPii(text, new Set(PII_TYPES));
      const abs = (p: Part) => ({ start: offsets[p.utterance]! + p.start, end: offsets[p.utterance]! + p.end });
      const gold = call.entities.map((e) => ({ ...e, abs: e.parts.map(abs) }));
      const coveredBy = (e: (typeof gold)[number], ok: (s: Span) => boolean): boolean =>
        e.abs.every((p) => {
          for (let i = p.start; i < p.end; i++) {
            if (/\s/u.test(text[i]!)) continue;
            if (!spans.some((s) => ok(s) && s.start <= i && i < s.end)) return false;
          }
          return true;
        });
      for (const e of gold) {
        entitiesTotal++;
        const c = count(lang, e.type);
        c.total++;
        if (coveredBy(e, (s) => s.type === e.type)) c.found++;
        if (coveredBy(e, () => true)) c.masked++;
        else if (show) console.log(`MISS  ${call.id} ${e.type}: ${e.text}`);
        if (show && !coveredBy(e, (s) => s.type === e.type) && coveredBy(e, () => true))
          console.log(`TYPE  ${call.id} ${e.type}: ${e.text} (masked as another type)`);
      }
      for (const s of spans) {
        const c = count(lang, s.type);
        const hit = gold.some((e) => e.abs.some((p) => s.start < p.end && p.start < s.end));
        if (hit) c.tp++;
        else {
          c.fp++;
          if (show) console.log(`FALSE ${call.id} ${s.type}: ${JSON.stringify(text.slice(s.start, s.end))}`);
        }
      }
      for (const o of call.ordinary) {
        const { start, end } = abs(o.part);
        const k = ordinary.get(o.kind) ?? { kept: 0, total: 0 };
        k.total++;
        if (!spans.some((s) => s.start < end && start < s.end)) k.kept++;
        else if (show) console.log(`LOST  ${call.id} ${o.kind}: ${o.text}`);
        ordinary.set(o.kind, k);
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
  console.log(`\n== ${label}\nlang  type          entities  masked  recall  detected  precision`);
  for (const lang of [...LANGS, "all"]) {
    for (const type of PII_TYPES) {
      const c =
        lang === "all"
          ? LANGS.map((l) => counts.get(`${l}\t${type}`)).reduce<Count>(add, ZERO)
          : counts.get(`${lang}\t${type}`);
      if (!c || c.total + c.tp + c.fp === 0) continue;
      console.log(
        `${lang.padEnd(5)} ${type.padEnd(13)} ${String(c.total).padStart(8)}  ${pct(c.masked, c.total)}  ${pct(c.found, c.total)}  ${String(c.tp + c.fp).padStart(8)}  ${pct(c.tp, c.tp + c.fp)}`,
      );
    }
  }
  if (ordinary.size > 0) {
    const all = [...ordinary.values()].reduce((a, b) => ({ kept: a.kept + b.kept, total: a.total + b.total }));
    const kinds = [...ordinary.entries()].map(([k, v]) => `${k} ${v.kept}/${v.total}`).join(", ");
    console.log(`ordinary numbers kept: ${all.kept}/${all.total} (${pct(all.kept, all.total).trim()}): ${kinds}`);
  }
  const cpu = process.cpuUsage(started);
  console.log(
    `entities: ${entitiesTotal}; labelled text left in a redacted msg or words: ${leaks}; ` +
      `${chars} characters in ${((Date.now() - wall) / 1000).toFixed(2)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s CPU`,
  );
}

const clean = (lang: string): string => `${lang}.txt`;
const cleanHeldOut = (lang: string): string => `${lang}-heldout.txt`;
const asr = (lang: string): string => `asr-${lang}.txt`;
const asrHeldOut = (lang: string): string => `asr-${lang}-heldout.txt`;
score("development set (the rules were written against it)", [clean]);
score("held-out set (written after the rules were frozen)", [cleanHeldOut]);
score("both", [clean, cleanHeldOut]);
score("ASR-shaped, development (the recall rules were written against it)", [asr]);
const asrHeldOut2 = (lang: string): string => `asr-${lang}-heldout2.txt`;
score("ASR-shaped, held-out part 1 (written after the recall rules were frozen at 692ec42; seen since 45748e7)", [
  asrHeldOut,
]);
score("ASR-shaped, held-out part 2 (written after the rules were frozen again at 45748e7)", [asrHeldOut2]);
const asrHeldOut3 = (lang: string): string => `asr-${lang}-heldout3.txt`;
score("ASR-shaped, held-out part 3 (written after the rules were frozen again at af90bdf)", [asrHeldOut3]);
