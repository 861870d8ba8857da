// A completed transcript as SRT, WebVTT or plain text. Pure functions of the utterances; the cue rules are in
// cues.ts. Speaker labels appear when the job was diarized (or multi-channel: then they name channels).
import { buildCues, type Cue, type CueRules, type CueSource, DEFAULT_CUE_RULES } from "./cues.js";

export const EXPORT_FORMATS = ["srt", "vtt", "txt"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  srt: "application/x-subrip; charset=utf-8",
  vtt: "text/vtt; charset=utf-8",
  txt: "text/plain; charset=utf-8",
};

export interface ExportOptions {
  /** Label each speaker ("Speaker 0"), each channel ("Channel 0"), or nobody. */
  speakers?: "speaker" | "channel" | null;
  rules?: CueRules;
}

/** "Speaker N" or "Channel N"; a known speaker's name instead where the job named it (docs/speakers.md). */
export function speakerLabel(spk: number, kind: "speaker" | "channel", name?: string): string {
  return name ?? `${kind === "speaker" ? "Speaker" : "Channel"} ${spk}`;
}

export function renderExport(format: ExportFormat, utterances: CueSource[], opts: ExportOptions = {}): string {
  switch (format) {
    case "srt":
      return toSrt(utterances, opts);
    case "vtt":
      return toVtt(utterances, opts);
    case "txt":
      return toText(utterances, opts);
  }
}

/** SubRip: numbered cues, `HH:MM:SS,mmm`; a diarized cue starts with `[Speaker N] ` (counted in the line). */
export function toSrt(utterances: CueSource[], opts: ExportOptions = {}): string {
  const kind = opts.speakers;
  const cues = buildCues(
    utterances,
    opts.rules ?? DEFAULT_CUE_RULES,
    kind ? (u) => `[${speakerLabel(u.spk, kind, u.spk_name)}] ` : undefined,
  );
  return cues.map((c, i) => `${i + 1}\n${timing(c, ",")}\n${c.lines.join("\n")}\n`).join("\n");
}

/** WebVTT: a diarized cue carries a voice tag `<v Speaker N>`, which players show or style, not a text prefix. */
export function toVtt(utterances: CueSource[], opts: ExportOptions = {}): string {
  const kind = opts.speakers;
  const cues = buildCues(utterances, opts.rules ?? DEFAULT_CUE_RULES);
  const body = cues.map((c) => {
    const lines = c.lines.map(escapeVtt);
    if (kind) lines[0] = `<v ${escapeVtt(speakerLabel(c.spk, kind, c.spk_name))}>${lines[0]}`;
    return `${timing(c, ".")}\n${lines.join("\n")}\n`;
  });
  return ["WEBVTT\n", ...body].join("\n");
}

/** Plain text: one line per utterance; when diarized, one paragraph per speaker turn, `Speaker N: ...`. */
export function toText(utterances: CueSource[], opts: ExportOptions = {}): string {
  const sorted = [...utterances].sort((a, b) => a.start_at - b.start_at).filter((u) => u.msg.trim());
  const kind = opts.speakers;
  if (!kind) return sorted.map((u) => u.msg.trim() + "\n").join("");
  const turns: { spk: number; name: string | undefined; text: string[] }[] = [];
  for (const u of sorted) {
    const last = turns[turns.length - 1];
    if (last && last.spk === u.spk) last.text.push(u.msg.trim());
    else turns.push({ spk: u.spk, name: u.spk_name, text: [u.msg.trim()] });
  }
  return turns.map((t) => `${speakerLabel(t.spk, kind, t.name)}: ${t.text.join(" ")}\n`).join("\n");
}

function timing(c: Cue, decimal: "," | "."): string {
  return `${clock(c.start, decimal)} --> ${clock(c.end, decimal)}`;
}

export function clock(ms: number, decimal: "," | "."): string {
  const t = Math.max(0, Math.round(ms));
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor((t % 3_600_000) / 60_000);
  const s = Math.floor((t % 60_000) / 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}${decimal}${pad(t % 1000, 3)}`;
}

// Cue text may not hold "-->" or raw markup; entities keep what the transcript said.
const escapeVtt = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
