// Pipeline stage: speaker turns from the engine's `diarize` op + recognized segments → segments with a speaker each,
// split where the speaker changes. Plain functions over the engine's float seconds; no I/O.
//
// Why here and not in the engine: the turns come from the audio alone, the words from the recognizer; joining them
// is bookkeeping over two lists, easiest to test (and to change) next to the utterance code that consumes it.
import type { EngineSegment, EngineWord } from "../engine/protocol.js";

export interface SpeakerTurn {
  start: number;
  end: number;
  speaker: number;
}

export interface SpeakerSegment extends EngineSegment {
  spk: number;
}

/** A word run shorter than this (seconds) between two runs of one other speaker is taken as boundary jitter. */
export const MIN_RUN_S = 0.3;

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

/** The speaker of a time span: the turn overlapping it most, else the turn nearest its midpoint; null when there
 * are no turns at all. `turns` must be sorted by start. */
export function speakerAt(turns: readonly SpeakerTurn[], start: number, end: number): number | null {
  if (turns.length === 0) return null;
  let best: SpeakerTurn | null = null;
  let bestOverlap = 0;
  let nearest = turns[0]!;
  let nearestDist = Infinity;
  const mid = (start + end) / 2;
  for (const t of turns) {
    const ov = overlap(start, end, t.start, t.end);
    if (ov > bestOverlap) {
      bestOverlap = ov;
      best = t;
    }
    const dist = mid < t.start ? t.start - mid : mid > t.end ? mid - t.end : 0;
    if (dist < nearestDist) {
      nearestDist = dist;
      nearest = t;
    }
  }
  return (best ?? nearest).speaker;
}

interface Run {
  spk: number;
  words: EngineWord[];
}

function runDuration(r: Run): number {
  return r.words[r.words.length - 1]!.end - r.words[0]!.start;
}

/** Groups consecutive words of one speaker; a short run between two runs of one other speaker (or at an edge, next
 * to a longer run) joins its neighbour. */
export function wordRuns(words: readonly EngineWord[], speakers: readonly number[], minRunS = MIN_RUN_S): Run[] {
  let runs: Run[] = [];
  words.forEach((w, i) => {
    const spk = speakers[i]!;
    const last = runs[runs.length - 1];
    if (last && last.spk === spk) last.words.push(w);
    else runs.push({ spk, words: [w] });
  });
  // Fold the shortest short run into a neighbour, until none is left (each pass removes one run).
  for (;;) {
    let pick = -1;
    for (let i = 0; i < runs.length; i++) {
      if (runs.length < 2 || runDuration(runs[i]!) >= minRunS) continue;
      const prev = runs[i - 1];
      const next = runs[i + 1];
      const sandwiched = prev && next && prev.spk === next.spk;
      const edge = (!prev || !next) && (prev ?? next)!.words.length > runs[i]!.words.length;
      if ((sandwiched || edge) && (pick < 0 || runDuration(runs[i]!) < runDuration(runs[pick]!))) pick = i;
    }
    if (pick < 0) break;
    const target = runs[pick - 1] ?? runs[pick + 1]!;
    runs[pick]!.spk = target.spk;
    // Merge adjacent runs of one speaker again.
    const merged: Run[] = [];
    for (const r of runs) {
      const last = merged[merged.length - 1];
      if (last && last.spk === r.spk) last.words.push(...r.words);
      else merged.push({ spk: r.spk, words: [...r.words] });
    }
    runs = merged;
  }
  return runs;
}

/**
 * Gives every segment a speaker and splits a segment whose words belong to different speakers. A segment without
 * words takes the speaker of its span. Speaker ids are renumbered 0..N-1 in order of first appearance (by time).
 * Without turns (no speech found by the diarizer) every segment is speaker 0.
 */
export function assignSpeakers(segments: readonly EngineSegment[], turns: readonly SpeakerTurn[]): SpeakerSegment[] {
  const sorted = [...turns].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: SpeakerSegment[] = [];
  for (const seg of segments) {
    const words = seg.words ?? [];
    if (words.length === 0) {
      out.push({ ...seg, spk: speakerAt(sorted, seg.start, seg.end) ?? 0 });
      continue;
    }
    const speakers = words.map((w) => speakerAt(sorted, w.start, w.end) ?? 0);
    const runs = wordRuns(words, speakers);
    if (runs.length === 1) {
      out.push({ ...seg, spk: runs[0]!.spk });
      continue;
    }
    runs.forEach((r, i) => {
      const first = r.words[0]!;
      const last = r.words[r.words.length - 1]!;
      out.push({
        ...seg,
        // The first piece keeps the segment's start, the last its end, so no audio falls between the pieces' edges.
        start: i === 0 ? Math.min(seg.start, first.start) : first.start,
        end: i === runs.length - 1 ? Math.max(seg.end, last.end) : last.end,
        text: r.words
          .map((w) => w.text)
          .join("")
          .trim(),
        words: r.words,
        spk: r.spk,
      });
    });
  }
  return renumber(out);
}

/** Speaker ids 0..N-1 in order of first appearance (segments taken by start time). */
export function renumber<T extends { start: number; spk: number }>(items: readonly T[]): T[] {
  const order = new Map<number, number>();
  const byTime = [...items].sort((a, b) => a.start - b.start);
  for (const it of byTime) if (!order.has(it.spk)) order.set(it.spk, order.size);
  return items.map((it) => ({ ...it, spk: order.get(it.spk)! }));
}
