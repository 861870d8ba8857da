// Streaming finals against the batch result on the same audio (docs/streaming.md, "Figures"): every ko and ja clip
// of ../shared/testdata, as an 8 kHz copy (bench/narrowband.py), goes through a streaming session (LINEAR16,
// domain CALL, 100 ms frames at real-time pace, `--parallel` sessions at once) and, as a wav of the same samples,
// through a batch job (model sommers, domain CALL), both against a running `sori serve` with streaming on. Prints
// the normalized and exact CER (bench/cer.ts) of both, per language, corpus level.
//
//   RTZR_CLIENT_ID=.. RTZR_CLIENT_SECRET=.. npx tsx bench/streaming-accuracy.ts --url http://127.0.0.1:8000
//
// The batch jobs are submitted while the sessions run, so the streams also run beside batch work.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { authenticate } from "../test/helpers/api.js";
import { manifest, Tally } from "./cer.js";
import { ROOT, TESTDATA } from "./paths.js";

const { values: args } = parseArgs({
  options: {
    url: { type: "string", default: "http://127.0.0.1:8000" },
    langs: { type: "string", default: "ko,ja" },
    parallel: { type: "string", default: "4" },
    pace: { type: "string", default: "1", short: "p" },
    python: { type: "string", default: path.join(ROOT, ".venv", "bin", "python") },
    files: { type: "boolean", default: false },
  },
});
const url = args.url!;
const pace = Number(args.pace);
const id = process.env.RTZR_CLIENT_ID;
const secret = process.env.RTZR_CLIENT_SECRET;
if (!id || !secret) throw new Error("set RTZR_CLIENT_ID and RTZR_CLIENT_SECRET");

/** The samples of a 16-bit PCM wav (its `data` chunk). */
function wavData(file: string): Buffer {
  const b = fs.readFileSync(file);
  let at = 12;
  while (at + 8 <= b.length) {
    const size = b.readUInt32LE(at + 4);
    if (b.toString("ascii", at, at + 4) === "data") return b.subarray(at + 8, at + 8 + size);
    at += 8 + size + (size % 2);
  }
  throw new Error(`no data chunk in ${file}`);
}

async function stream(token: string, pcm: Buffer, lang: string): Promise<string> {
  const query = `sample_rate=8000&encoding=LINEAR16&model_name=sommers_${lang}&domain=CALL&epd_time=0.5`;
  const ws = new WebSocket(`${url.replace(/^http/u, "ws")}/v1/transcribe:streaming?${query}`, {
    headers: { Authorization: `bearer ${token}` },
  });
  const finals: string[] = [];
  const done = new Promise<void>((resolve, reject) => {
    ws.on("message", (data) => {
      const a = JSON.parse(String(data));
      if (a.error) reject(new Error(JSON.stringify(a.error)));
      else if (a.final) finals.push(a.alternatives[0].text);
    });
    ws.on("close", () => resolve());
    ws.on("error", reject);
  });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  const step = 1600; // 100 ms at 8 kHz, s16
  const t0 = Date.now();
  for (let i = 0; i < pcm.length; i += step) {
    ws.send(pcm.subarray(i, i + step));
    const due = t0 + ((i + step) / 16000) * (1000 / pace);
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  }
  ws.send("EOS");
  await done;
  return finals.join(lang === "ja" ? "" : " ");
}

/** Submits each file as a batch job, then reads the jobs one at a time (the API allows 5 reads a second). */
async function batch(token: string, files: { file: string; lang: string }[]): Promise<string[]> {
  const auth = { Authorization: `bearer ${token}` };
  const ids: string[] = [];
  for (const f of files) {
    const form = new FormData();
    form.append("config", JSON.stringify({ model_name: "sommers", language: f.lang, domain: "CALL" }));
    form.append("file", new Blob([fs.readFileSync(f.file)]), path.basename(f.file));
    for (;;) {
      const r = await fetch(`${url}/v1/transcribe`, { method: "POST", body: form, headers: auth });
      const body = (await r.json()) as { id?: string; code?: string };
      if (body.id) {
        ids.push(body.id);
        break;
      }
      if (body.code !== "A0001" && body.code !== "A0002" && body.code !== "A0003")
        throw new Error(JSON.stringify(body));
      await new Promise((resolve) => setTimeout(resolve, 1000)); // a limit of the API: try again
    }
  }
  const texts: (string | undefined)[] = new Array(files.length);
  while (texts.filter((t) => t !== undefined).length < files.length) {
    for (const [i, id] of ids.entries()) {
      if (texts[i] !== undefined) continue;
      await new Promise((r) => setTimeout(r, 300));
      const body = (await (await fetch(`${url}/v1/transcribe/${id}`, { headers: auth })).json()) as {
        status: string;
        results?: { utterances: { msg: string }[] };
      };
      const sep = files[i]!.lang === "ja" ? "" : " ";
      if (body.status === "completed") texts[i] = body.results!.utterances.map((u) => u.msg).join(sep);
      else if (body.status !== "transcribing") throw new Error(`batch job ${id}: ${JSON.stringify(body)}`);
    }
  }
  return texts as string[];
}

const clips = manifest(TESTDATA, args.langs!.split(","));
const dir = path.join(os.tmpdir(), "sori-narrowband");
execFileSync(args.python!, [path.join(ROOT, "bench", "narrowband.py"), dir, ...clips.map((c) => c.file)], {
  stdio: "inherit",
});
const token = await authenticate(url, id, secret);
const t0 = Date.now();
const batchTexts = batch(
  token,
  clips.map((c) => ({ file: path.join(dir, c.file), lang: c.lang })),
);
const streamTexts: string[] = new Array(clips.length);
let next = 0;
await Promise.all(
  Array.from({ length: Number(args.parallel) }, async () => {
    while (next < clips.length) {
      const i = next++;
      const c = clips[i]!;
      streamTexts[i] = await stream(token, wavData(path.join(dir, c.file)), c.lang);
    }
  }),
);
const batched = await batchTexts;
const out: Record<string, unknown> = { clips: clips.length, parallel: Number(args.parallel), pace };
for (const lang of new Set(clips.map((c) => c.lang))) {
  const s = new Tally();
  const b = new Tally();
  clips.forEach((c, i) => {
    if (c.lang !== lang) return;
    s.add(streamTexts[i]!, c.ref, lang);
    b.add(batched[i]!, c.ref, lang);
  });
  const r = (t: Tally) => ({
    normalized: Math.round((t.norm[0]! / t.norm[1]!) * 1000) / 1000,
    exact: Math.round((t.exact[0]! / t.exact[1]!) * 1000) / 1000,
  });
  out[lang] = { files: s.fileNorm.length, streaming: r(s), batch: r(b) };
  if (args.files) {
    const mine = clips.map((c, i) => ({ c, i })).filter((x) => x.c.lang === lang);
    out[`${lang}_files`] = mine.map(({ c, i }, k) => ({
      file: c.file,
      streaming: Math.round(s.fileNorm[k]! * 1000) / 1000,
      batch: Math.round(b.fileNorm[k]! * 1000) / 1000,
      stream_text: streamTexts[i],
      batch_text: batched[i],
    }));
  }
}
out.wall_s = Math.round((Date.now() - t0) / 100) / 10;
console.log(JSON.stringify(out, null, 1));
