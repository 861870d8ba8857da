// The redacted copy of a job's audio (`pii_redaction.audio`, docs/pii.md): the engine writes the copy to a spool file
// of ours (never a path from a request), and the blob store adopts it under a fresh key, which the job row keeps
// until the job expires or is deleted.
import fs from "node:fs";
import type { PiiAudioMode } from "../../domain/pii.js";
import type { Engine } from "../../engine/client.js";
import { audioTracks, type SaidInAudio } from "../../pii/audio.js";
import type { BlobStore } from "../../storage/blobs/index.js";
import { spoolPath } from "../../storage/blobs/spool.js";

export interface RedactedAudioInput {
  audioPath: string;
  said: SaidInAudio;
  mode: PiiAudioMode;
  /** use_multi_channel: a channel per party, each covered at its own spans; otherwise the mono downmix. */
  multiChannel: boolean;
  dataDir: string;
  maxAudioS: number;
  timeoutMs: number;
  /** Aborted when the task is no longer ours: the engine requests end at once. */
  signal?: AbortSignal;
}

/** Writes the copy and stores it; returns its blob key. */
export async function storeRedactedAudio(engine: Engine, blobs: BlobStore, input: RedactedAudioInput): Promise<string> {
  const channels = input.multiChannel ? (await engine.probe(input.audioPath, input.signal)).channels : null;
  const out = spoolPath(input.dataDir, "engine");
  try {
    await engine.redactAudio(
      {
        audio_path: input.audioPath,
        out_path: out,
        mode: input.mode,
        tracks: audioTracks(input.said, channels),
        max_duration_s: input.maxAudioS,
      },
      { timeoutMs: input.timeoutMs, signal: input.signal },
    );
    return (await blobs.adopt(out)).key;
  } finally {
    // adopt() moved or consumed it; after a failure it may still be there.
    await fs.promises.rm(out, { force: true });
  }
}
