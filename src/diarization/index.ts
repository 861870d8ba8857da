// Diarization stage of the pipeline: engine segments + engine speaker turns → utterances with `spk`.

import type { Utterance } from "../domain/utterance.js";
import type { EngineSegment } from "../engine/protocol.js";
import { toUtterances } from "../engine/utterances.js";
import { assignSpeakers, type SpeakerTurn } from "./assign.js";

export { assignSpeakers, renumber, type SpeakerSegment, type SpeakerTurn, speakerAt, wordRuns } from "./assign.js";

/** Utterances split at speaker changes, `spk` 0..N-1 in order of first appearance. The segments must carry words
 * (the pipeline asks the engine for them whenever it diarizes); `wordTimestamps` says whether the words are kept in
 * the output. */
export function speakerUtterances(
  segments: readonly EngineSegment[],
  turns: readonly SpeakerTurn[],
  opts: { wordTimestamps: boolean },
): Utterance[] {
  const out = assignSpeakers(segments, turns).flatMap((seg) =>
    toUtterances([seg], { wordTimestamps: opts.wordTimestamps, spk: seg.spk }),
  );
  return out.sort((a, b) => a.start_at - b.start_at);
}
