// An enrollment's audio → one voiceprint, or the reason it cannot be one: too little or too much speech, several
// voices, audio the engine cannot decode. The engine finds the speech in each file as diarization does and embeds it
// (docs/engine.md, `voiceprint`); the files themselves are the caller's to delete.
import { InvalidInput, UnsupportedAudio } from "../domain/errors.js";
import type { Engine } from "../engine/client.js";
import { EngineError } from "../engine/protocol.js";
import type { SpeakerOptions } from "./options.js";
import type { Voiceprint } from "./voiceprint.js";

export async function enrollVoice(
  engine: Engine,
  files: readonly string[],
  opts: Pick<SpeakerOptions, "minEnrollS" | "maxEnrollS" | "maxAudioS">,
  timeoutMs: number,
): Promise<Voiceprint> {
  const result = await engine
    .voiceprint(
      {
        voices: [{ parts: files.map((audio_path) => ({ audio_path })) }],
        count_voices: true,
        phone_prints: true,
        max_duration_s: opts.maxAudioS,
      },
      { timeoutMs },
    )
    .catch((err: unknown) => {
      if (err instanceof EngineError && err.code === "audio_decode_failed") {
        throw new UnsupportedAudio(`the audio could not be decoded: ${err.message}`);
      }
      if (err instanceof EngineError && err.code === "audio_too_long") {
        throw new InvalidInput(`the enrollment audio is over ${opts.maxAudioS} s`);
      }
      throw err;
    });
  const voice = result.voices[0];
  if (!voice) throw new EngineError("internal", "the engine returned no voice");
  if ((voice.voices ?? 1) > 1) {
    throw new InvalidInput(
      `the enrollment audio holds several voices (${voice.voices} found): send speech of the one person to enroll`,
    );
  }
  if (!voice.embedding || voice.speech_s < opts.minEnrollS) {
    throw new InvalidInput(
      `too little speech to enroll: ${voice.speech_s.toFixed(1)} s found, at least ${opts.minEnrollS} s are needed`,
    );
  }
  if (voice.speech_s > opts.maxEnrollS) {
    throw new InvalidInput(
      `too much speech to enroll: ${voice.speech_s.toFixed(1)} s found, at most ${opts.maxEnrollS} s are taken`,
    );
  }
  return {
    model: result.model,
    embedding: voice.embedding,
    embeddingPhone: voice.embedding_phone ?? null,
    speechS: voice.speech_s,
  };
}
