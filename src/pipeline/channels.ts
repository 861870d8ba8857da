// Pipeline stage for `use_multi_channel`: each channel of the file is transcribed on its own (the engine decodes
// one channel when given `channel`), its utterances get `spk` = the channel index, and all channels' utterances
// are merged in time order. Diarization does not apply: a channel is a speaker (one party of a call per channel).

import type { Utterance } from "../domain/utterance.js";
import type { Engine } from "../engine/client.js";
import { EngineError, type TranscribeParams } from "../engine/protocol.js";
import { toUtterances } from "../engine/utterances.js";
import { type Checkpoints, resumable } from "./checkpoints.js";

/** More channels than this is not a call or meeting recording; refused rather than transcribed N times. */
export const MAX_CHANNELS = 8;

export interface ChannelOptions {
  wordTimestamps: boolean;
  /** Engine time budget for each channel's transcription. */
  timeoutMs: number;
  onProgress?: ((fraction: number) => void) | undefined;
  /** Each channel is a part of its own (a finished channel's checkpoints make it cost only a re-assembly). */
  checkpoints?: Checkpoints | undefined;
  /** Passed to each engine request: aborting it ends the channel's transcription at once. */
  signal?: AbortSignal | undefined;
}

export async function transcribeChannels(
  engine: Engine,
  params: TranscribeParams,
  opts: ChannelOptions,
): Promise<Utterance[]> {
  const { channels } = await engine.probe(params.audio_path, opts.signal);
  if (channels > MAX_CHANNELS) {
    throw new EngineError(
      "audio_decode_failed",
      `use_multi_channel supports at most ${MAX_CHANNELS} channels; the audio has ${channels}`,
    );
  }
  const count = Math.max(1, channels);
  const perChannel: Utterance[][] = [];
  for (let channel = 0; channel < count; channel++) {
    // A mono file is transcribed as it is (the downmix of one channel is that channel).
    const request = await resumable(count === 1 ? params : { ...params, channel }, opts.checkpoints, channel);
    const raw = await engine.transcribe(request.params, {
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onProgress: opts.onProgress && ((f) => opts.onProgress!((channel + f) / count)),
      ...(request.onCheckpoint ? { onCheckpoint: request.onCheckpoint } : {}),
    });
    perChannel.push(toUtterances(raw.segments, { wordTimestamps: opts.wordTimestamps, spk: channel }));
  }
  return mergeByTime(perChannel);
}

/** All channels' utterances in time order; at equal start times the lower channel first. */
export function mergeByTime(perChannel: Utterance[][]): Utterance[] {
  return perChannel.flat().sort((a, b) => a.start_at - b.start_at || a.spk - b.spk);
}
