// The tunables of known speakers in one record (docs/speakers.md has the measurements behind each).

export interface SpeakerOptions {
  /** Cosine between a diarized speaker's voiceprint and an enrolled one at or above which it takes the name. */
  threshold: number;
  /** The best enrolled voice must beat the second best by this much, or the speaker stays anonymous. */
  margin: number;
  /** A diarized speaker (or channel) with less speech than this is never named: too little to tell. */
  minSpeechS: number;
  /** An utterance with at least this much speech of its own is checked against its own audio (match.ts). */
  utteranceMinS: number;
  /** A checked utterance keeps its cluster's name when that voice is its best and scores at least this. */
  keepThreshold: number;
  /** `threshold` and `keepThreshold` for a voice heard on the phone (narrowband) against an enrolled voice's phone
   * print (docs/speakers.md, "Phone calls"). */
  phoneThreshold: number;
  phoneKeepThreshold: number;
  /** Unchecked (short) utterances take their cluster's name only when this share of the cluster's checked speech kept
   * it. */
  clusterAgreement: number;
  /** An unchecked utterance that could be embedded still does not take its cluster's name when it scores below this
   * against that voice (its phone print for a phone voice): too short to confirm a name, long enough to refuse one. */
  shortVeto: number;
  /** Enrollment bounds: the speech found in all the files of one request, or a speaker's after added audio. */
  minEnrollS: number;
  maxEnrollS: number;
  /** One enrollment request: at most this many files, bytes (all files together) and seconds of audio. */
  maxFiles: number;
  maxUploadBytes: number;
  maxAudioS: number;
  /** Speakers one client may enroll: the more voices a job is matched against, the more chances of a wrong name. */
  maxPerClient: number;
}

export const SPEAKER_OPTIONS: SpeakerOptions = {
  threshold: 0.55,
  margin: 0.05,
  minSpeechS: 3,
  utteranceMinS: 1.5,
  keepThreshold: 0.55,
  phoneThreshold: 0.6,
  phoneKeepThreshold: 0.6,
  clusterAgreement: 0.8,
  shortVeto: 0.35,
  minEnrollS: 5,
  maxEnrollS: 300,
  maxFiles: 10,
  maxUploadBytes: 100 * 1024 * 1024,
  maxAudioS: 600,
  maxPerClient: 1000,
};

/** The engine's voiceprint model (sori_engine/voiceprint.py, MODEL): a stored voiceprint of another model is not
 * compared; a job naming one is refused at submit, and adding audio to one is refused (enroll it again). */
export const VOICEPRINT_MODEL = "campplus-92f29b94e694-piece10-cohort-1f2f4b39";
