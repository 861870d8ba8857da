// What an upload is, decided by its content (magic bytes), never by its name or declared content type.
import { fileTypeFromFile } from "file-type";
import { UnsupportedAudio } from "../domain/errors.js";
import { checkWavCodec } from "./wavCodec.js";

export const SUPPORTED_FORMATS = ["mp4", "m4a", "mp3", "amr", "flac", "wav"] as const;
export type AudioFormat = (typeof SUPPORTED_FORMATS)[number];

/** The media types a file part is documented with (/openapi.json): those of the six formats, and
 * application/octet-stream. The declared type is never read: the content decides (detectFormat). */
export const AUDIO_PART_TYPES =
  "audio/mp4, audio/x-m4a, video/mp4, audio/mpeg, audio/amr, audio/flac, audio/wav, audio/x-wav, application/octet-stream";

const isSupported = (ext: string): ext is AudioFormat => (SUPPORTED_FORMATS as readonly string[]).includes(ext);

/** The upload's format, or UnsupportedAudio (the API's 400 H0010) for anything outside the spec's list (ogg, webm,
 * text, random bytes...). */
export async function detectFormat(file: string): Promise<AudioFormat> {
  const type = await fileTypeFromFile(file);
  if (type && isSupported(type.ext)) {
    if (type.ext === "wav") await checkWavCodec(file);
    return type.ext;
  }
  const what = type ? `${type.ext} (${type.mime})` : "unrecognised content";
  throw new UnsupportedAudio(`unsupported file type: ${what}; supported: ${SUPPORTED_FORMATS.join(", ")}`);
}
