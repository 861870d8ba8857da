// The submit's check of `speaker_identification.speakers`: every id the caller's, and every voiceprint of this
// server's model (voiceprints of different models are never compared). An empty list names all of the caller's.
import { InvalidInput } from "../domain/errors.js";
import type { Store } from "../storage/db.js";
import { listSpeakers } from "../storage/speakers.js";
import { VOICEPRINT_MODEL } from "./options.js";

export async function checkKnownSpeakers(store: Store, clientId: string, ids: readonly string[]): Promise<void> {
  const found = await listSpeakers(store, clientId, ids.length ? [...new Set(ids)] : undefined);
  const missing = ids.find((id) => !found.some((s) => s.id === id));
  if (missing !== undefined) {
    throw new InvalidInput(`config.speaker_identification.speakers: no speaker with id ${missing}`);
  }
  const stale = found.find((s) => s.model !== VOICEPRINT_MODEL);
  if (stale) throw new InvalidInput(staleVoiceprint(stale));
}

export const staleVoiceprint = (s: { id: string; model: string }): string =>
  `speaker ${s.id} was enrolled with the voiceprint model ${s.model}, and this server uses ${VOICEPRINT_MODEL}: ` +
  "voiceprints of different models are never compared; delete the speaker and enroll it again";
