// Known speakers (docs/speakers.md): enroll a voice once, and later jobs name it.
export { enrollVoice } from "./enroll.js";
export {
  channelSpans,
  diarizedSpans,
  identifySpeakers,
  type KnownVoice,
  subtract,
  utteranceSpans,
} from "./identify.js";
export { checkKnownSpeakers, staleVoiceprint } from "./known.js";
export {
  type Cluster,
  type Enrolled,
  type Match,
  matchSpeakers,
  nameUtterances,
  type UtteranceRule,
  type UtteranceVoice,
} from "./match.js";
export { SPEAKER_OPTIONS, type SpeakerOptions, VOICEPRINT_MODEL } from "./options.js";
export { cosine, mergePrints, type Voiceprint } from "./voiceprint.js";
