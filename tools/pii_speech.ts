// PII redaction on what the real model writes from speech (docs/pii.md): English calls synthesized with espeak-ng
// (voices, speeds, an 8 kHz telephone band with noise), transcribed by `sori transcribe` (Whisper base) with ITN on
// and off, then redacted by the same stage as the service. For each number read out it reports whether the model
// wrote four or more of its digits (written or spoken) and whether any four are left after redaction.
// Needs espeak-ng and sox; run under the bench lock: `flock ~/.sori-bench.lock npx tsx tools/pii_speech.ts [id]`.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_MIN_DIGITS, PII_TYPES } from "../src/domain/pii.js";
import type { Utterance } from "../src/domain/utterance.js";
import { digitRuns } from "../src/pii/digits.js";
import { redactUtterances } from "../src/pii/index.js";
import { ROOT } from "../test/helpers/paths.js";

const DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
/** "4155552671" read in groups of `sizes`: "four one five, five five five, two six seven one". */
const read = (d: string, sizes: number[]): string => {
  const out: string[] = [];
  let at = 0;
  for (const n of sizes) {
    out.push([...d.slice(at, at + n)].map((c) => DIGITS[Number(c)]).join(" "));
    at += n;
  }
  return out.join(", ");
};

interface Secret {
  type: string;
  digits: string;
}
interface Call {
  id: string;
  voice: string;
  speed: number;
  phone: boolean;
  text: string;
  secrets: Secret[];
}

const CALLS: Call[] = [
  {
    id: "s1",
    voice: "en-us",
    speed: 150,
    phone: false,
    text: `I would like to report a lost card. My card number is ${read("4532148803436467", [4, 4, 4, 4])}. And you can call me back at ${read("4155552671", [3, 3, 4])}. Thank you.`,
    secrets: [
      { type: "card", digits: "4532148803436467" },
      { type: "phone", digits: "4155552671" },
    ],
  },
  {
    id: "s2",
    voice: "en-us",
    speed: 175,
    phone: false,
    text: `The total was one hundred twenty nine dollars. My account number is ${read("7291044836", [4, 4, 2])}, and my phone number is ${read("3125550198", [3, 3, 4])}.`,
    secrets: [
      { type: "account", digits: "7291044836" },
      { type: "phone", digits: "3125550198" },
    ],
  },
  {
    id: "s3",
    voice: "en-gb",
    speed: 140,
    phone: true,
    text: `I want to pay with my card. The number is ${read("5500000000000004", [4, 4, 4, 4])}. Please call me on ${read("6175550123", [3, 3, 4])} if there is a problem.`,
    secrets: [
      { type: "card", digits: "5500000000000004" },
      { type: "phone", digits: "6175550123" },
    ],
  },
  {
    id: "s4",
    voice: "en-us+f3",
    speed: 165,
    phone: true,
    text: `My social security number is ${read("523446912", [3, 2, 4])}. The appointment is at two thirty on Friday, and it costs forty five dollars.`,
    secrets: [{ type: "national_id", digits: "523446912" }],
  },
  {
    id: "s5",
    voice: "en-us",
    speed: 175,
    phone: true,
    text: `Send the refund to my checking account. The routing number is ${read("021000021", [3, 3, 3])}, and the account number is ${read("483019276", [4, 4, 1])}. I ordered three items on the twelfth.`,
    secrets: [
      { type: "account", digits: "021000021" },
      { type: "account", digits: "483019276" },
    ],
  },
  {
    id: "s6",
    voice: "en-us+m3",
    speed: 155,
    phone: true,
    text: `Okay, the card number is ${read("378282246310005", [4, 6, 5])}. And you can text me at ${read("2125558304", [3, 3, 4])}. My order number is seven three nine four zero two one eight five six.`,
    secrets: [
      { type: "card", digits: "378282246310005" },
      { type: "phone", digits: "2125558304" },
    ],
  },
];

/** The fours of `secret` that `text` says (its digit runs as the PII rules read them, spoken or written). */
function fours(text: string, secret: string): string[] {
  const found = new Set<string>();
  for (const run of digitRuns(text)) {
    const d = run.map((u) => u.digits).join("");
    for (let i = 0; i + 4 <= d.length; i++) if (secret.includes(d.slice(i, i + 4))) found.add(d.slice(i, i + 4));
  }
  return [...found];
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-pii-speech-"));
const tally = new Map<string, { written: number; leaked: number; total: number }>();
const started = Date.now();
const only = process.argv[2]; // one call by its id, to try the script
const calls = CALLS.filter((c) => only === undefined || c.id === only);
for (const call of calls) {
  const raw = path.join(dir, `${call.id}.raw.wav`);
  const wav = path.join(dir, `${call.id}.wav`);
  execFileSync("espeak-ng", ["-v", call.voice, "-s", String(call.speed), "-w", raw, call.text]);
  if (call.phone) {
    const band = path.join(dir, `${call.id}.band.wav`);
    execFileSync("sox", [raw, "-r", "8000", band, "sinc", "300-3400"]);
    execFileSync("sox", ["-m", "-v", "1", band, "-v", "1", `|sox ${band} -p synth whitenoise vol 0.01`, wav]);
  } else fs.copyFileSync(raw, wav);
  for (const use_itn of [true, false]) {
    const config = JSON.stringify({ model_name: "whisper", language: "en", use_itn, use_word_timestamp: true });
    const r = spawnSync(path.join(ROOT, "bin/sori"), ["transcribe", "--no-progress", "--config", config, wav], {
      encoding: "utf8",
    });
    const out = r.stdout;
    const utterances = (JSON.parse(out.slice(out.indexOf("{"))) as { results: { utterances: Utterance[] } }).results
      .utterances;
    const redacted = redactUtterances(utterances, {
      types: PII_TYPES,
      mode: "mask",
      min_digits: DEFAULT_MIN_DIGITS,
      key: Buffer.alloc(32),
    });
    const before = utterances.map((u) => u.msg).join("\n");
    const after = redacted.map((u) => `${u.msg}\n${(u.words ?? []).map((w) => w.text).join(" ")}`).join("\n");
    console.log(`${call.id} itn=${use_itn}\n  model:    ${before.replace(/\n/gu, " | ")}`);
    console.log(`  redacted: ${redacted.map((u) => u.msg).join(" | ")}`);
    for (const s of call.secrets) {
      const t = tally.get(s.type) ?? { written: 0, leaked: 0, total: 0 };
      t.total++;
      if (fours(before, s.digits).length > 0) t.written++;
      const left = fours(after, s.digits);
      if (left.length > 0) {
        t.leaked++;
        console.log(`  LEAK ${s.type}: ${left.join(", ")}`);
      }
      tally.set(s.type, t);
    }
  }
}
console.log("\ntype          numbers  model wrote 4+ of its digits  left after redaction");
for (const [type, t] of tally)
  console.log(
    `${type.padEnd(13)} ${String(t.total).padStart(7)}  ${String(t.written).padStart(28)}  ${String(t.leaked).padStart(20)}`,
  );
console.log(`${calls.length} calls × ITN on/off in ${((Date.now() - started) / 1000).toFixed(0)} s wall`);
