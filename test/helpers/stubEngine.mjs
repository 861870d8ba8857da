#!/usr/bin/env node
// A stand-in for the Python engine (docs/engine.md's JSON-lines protocol) for HTTP tests that need a transcript
// known in advance: set SORI_PYTHON to this file and SORI_STUB_SEGMENTS to the segments' JSON
// ([{start, end, text}], seconds). `transcribe` answers those segments (with words split at spaces when asked);
// `refine` answers, for each span, its text with every redaction tag `[TYPE]` replaced by SORI_STUB_REFINED_VALUE:
// the audio "says" what the base result masked, as a re-decode would; `probe` answers SORI_STUB_CHANNELS channels
// (default 1); `redact_audio` writes a short silent WAV (and,
// with SORI_STUB_REDACT_LOG, appends its request to that file). It ignores its arguments (`-m sori_engine`).
import fs from "node:fs";
import readline from "node:readline";

const segments = JSON.parse(process.env.SORI_STUB_SEGMENTS ?? "[]");
const refinedValue = process.env.SORI_STUB_REFINED_VALUE ?? "";

function withWords(s) {
  const pieces = s.text.split(/(?=\s)/u).filter((p) => p.trim().length > 0);
  const step = (s.end - s.start) / pieces.length;
  return {
    ...s,
    words: pieces.map((p, i) => ({
      start: s.start + i * step,
      end: s.start + (i + 0.9) * step,
      text: p.startsWith(" ") ? p : ` ${p}`,
      probability: 0.9,
    })),
  };
}

function answer(req) {
  switch (req.op) {
    case "ping":
      return { version: "stub", models_loaded: [] };
    case "transcribe": {
      const p = req.params;
      const out = segments.map((s) => ({
        language: p.language ?? "ko",
        avg_logprob: -0.2,
        no_speech_prob: 0.01,
        ...s,
      }));
      return {
        duration_s: segments.length ? segments[segments.length - 1].end : 0,
        language: p.language ?? "ko",
        language_probs: { [p.language ?? "ko"]: 1 },
        segments: p.word_timestamps ? out.map(withWords) : out,
      };
    }
    case "probe":
      return {
        format: "wav",
        codec: "pcm_s16le",
        duration_s: 1,
        channels: Number(process.env.SORI_STUB_CHANNELS ?? 1),
        sample_rate: 16000,
      };
    case "redact_audio": {
      // A WAV of 0.1 s of silence per track (its request appended to SORI_STUB_REDACT_LOG when set).
      const { out_path: out, tracks } = req.params;
      const n = tracks.length;
      const data = Buffer.alloc(1600 * 2 * n);
      const head = Buffer.alloc(44);
      head.write("RIFF", 0);
      head.writeUInt32LE(36 + data.length, 4);
      head.write("WAVEfmt ", 8);
      head.writeUInt32LE(16, 16);
      head.writeUInt16LE(1, 20);
      head.writeUInt16LE(n, 22);
      head.writeUInt32LE(16000, 24);
      head.writeUInt32LE(16000 * 2 * n, 28);
      head.writeUInt16LE(2 * n, 32);
      head.writeUInt16LE(16, 34);
      head.write("data", 36);
      head.writeUInt32LE(data.length, 40);
      fs.writeFileSync(out, Buffer.concat([head, data]), { flag: "wx" });
      if (process.env.SORI_STUB_REDACT_LOG)
        fs.appendFileSync(process.env.SORI_STUB_REDACT_LOG, `${JSON.stringify(req.params)}\n`);
      return { duration_s: 0.1, channels: n };
    }
    case "refine":
      return {
        spans: req.params.spans.map((span) => ({
          current_score: -3,
          hypotheses: [{ text: span.text.replace(/\[[A-Z_]+\]/gu, refinedValue), score: -0.1, votes: 4 }],
        })),
      };
    default:
      return null;
  }
}

process.stdout.write(`${JSON.stringify({ id: null, event: "ready", version: "stub" })}\n`);
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  const result = answer(req);
  const msg = result
    ? { id: req.id, result }
    : { id: req.id, error: { code: "bad_request", message: `the stub has no ${req.op}` } };
  process.stdout.write(`${JSON.stringify(msg)}\n`);
});
